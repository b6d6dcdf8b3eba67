import { sql } from 'drizzle-orm';
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

// keygate's SQLite tables as Drizzle `sqlite-core` tables: column for column, index for index and
// check for check what `SqliteKeyStore.migrate()` (KEY_STORE_MIGRATIONS 1 and 2), `SqliteRateLimiter.migrate()`
// and `SqliteCreditLedger.migrate()` create (backends/sqlite/migrations.ts). Conventions of that DDL:
// instants shown to users are ISO 8601 TEXT, instants the code compares are INTEGER epoch ms, JSON is
// TEXT, booleans are 0/1. The one thing drizzle-kit cannot say is `WITHOUT ROWID` (keygate_usage): its
// table keeps a rowid, which changes nothing keygate reads or writes. test/drizzle/sqlite-kit.test.ts
// compares the catalogs; a change to that DDL must be made here too.

const json = <T>(name: string) => text(name, { mode: 'json' }).$type<T>();
const epochMs = (name: string) => integer(name, { mode: 'number' });

/** keygate's SQLite tables, one property per table. */
export function sqliteTables() {
  return {
    keygateMigrations: sqliteTable('keygate_migrations', {
      version: integer('version').primaryKey(),
      appliedAt: text('applied_at').notNull(),
    }),
    keygateKeys: sqliteTable(
      'keygate_keys',
      {
        id: text('id').primaryKey(),
        hash: text('hash').notNull(),
        accountId: text('account_id').notNull(),
        name: text('name').notNull(),
        mode: text('mode').$type<'live' | 'test'>().notNull(),
        status: text('status').$type<'active' | 'suspended' | 'revoked'>().notNull(),
        permissions: json<string[]>('permissions').notNull(),
        allowedIps: json<string[]>('allowed_ips').notNull(),
        hint: text('hint').notNull(),
        createdAt: text('created_at').notNull(),
        updatedAt: text('updated_at').notNull(),
        expiresAt: text('expires_at'),
        revokedAt: text('revoked_at'),
        rotatedFrom: text('rotated_from'),
        rotatedTo: text('rotated_to'),
        metadata: json<Record<string, unknown>>('metadata').notNull(),
        version: integer('version').notNull(),
        rateLimit: json<{ limit: number; windowMs: number }>('rate_limit'),
        suspendedAt: text('suspended_at'),
        suspendedReason: text('suspended_reason'),
      },
      (t) => [
        check('keygate_keys_mode_check', sql`mode IN ('live', 'test')`),
        check('keygate_keys_status_check', sql`status IN ('active', 'suspended', 'revoked')`),
        check('keygate_keys_version_check', sql`version >= 1`),
        uniqueIndex('keygate_keys_hash').on(t.hash),
        index('keygate_keys_account').on(t.accountId, t.createdAt),
      ],
    ),
    keygateUsage: sqliteTable(
      'keygate_usage',
      {
        keyId: text('key_id').notNull(),
        accountId: text('account_id').notNull(),
        day: text('day').notNull(),
        outcome: text('outcome').notNull(),
        count: integer('count').notNull(),
      },
      (t) => [
        primaryKey({ columns: [t.keyId, t.day, t.outcome] }),
        check('keygate_usage_count_check', sql`count >= 0`),
        index('keygate_usage_day').on(t.day),
      ],
    ),
    keygateKeyActivity: sqliteTable('keygate_key_activity', {
      keyId: text('key_id').primaryKey(),
      lastUsedAt: text('last_used_at').notNull(),
      lastUsedIp: text('last_used_ip'),
    }),
    keygateChanges: sqliteTable('keygate_changes', {
      seq: integer('seq').primaryKey({ autoIncrement: true }),
      at: epochMs('at').notNull(),
      change: text('change').notNull(),
    }),
    keygateUsedTokens: sqliteTable(
      'keygate_used_tokens',
      {
        tokenId: text('token_id').primaryKey(),
        expiresAt: text('expires_at').notNull(),
      },
      (t) => [index('keygate_used_tokens_expiry').on(t.expiresAt)],
    ),
    keygateAudit: sqliteTable(
      'keygate_audit',
      {
        id: text('id').primaryKey(),
        at: text('at').notNull(),
        accountId: text('account_id').notNull(),
        keyId: text('key_id'),
        action: text('action').notNull(),
        actorType: text('actor_type').$type<'dashboard' | 'cli' | 'api'>().notNull(),
        actorId: text('actor_id'),
        changes: json<unknown>('changes'),
        address: text('address'),
      },
      (t) => [
        check('keygate_audit_actor_type_check', sql`actor_type IN ('dashboard', 'cli', 'api')`),
        index('keygate_audit_account').on(t.accountId, t.id),
        index('keygate_audit_key').on(t.keyId, t.id).where(sql`key_id IS NOT NULL`),
        index('keygate_audit_at').on(t.at),
      ],
    ),
    keygateAuditRetention: sqliteTable(
      'keygate_audit_retention',
      {
        id: integer('id').primaryKey(),
        cutoff: text('cutoff').notNull(),
      },
      () => [check('keygate_audit_retention_id_check', sql`id = 1`)],
    ),
    keygateOutbox: sqliteTable(
      'keygate_outbox',
      {
        id: text('id').primaryKey(),
        accountId: text('account_id').notNull(),
        type: text('type').notNull(),
        at: text('at').notNull(),
        data: json<unknown>('data').notNull(),
      },
      (t) => [index('keygate_outbox_at').on(t.at, t.id)],
    ),
    keygateWebhookEndpoints: sqliteTable(
      'keygate_webhook_endpoints',
      {
        id: text('id').primaryKey(),
        accountId: text('account_id').notNull(),
        url: text('url').notNull(),
        secret: text('secret').notNull(),
        eventTypes: json<string[]>('event_types').notNull(),
        enabled: integer('enabled', { mode: 'boolean' }).notNull(),
        createdAt: text('created_at').notNull(),
        disabledAt: text('disabled_at'),
        failingSince: text('failing_since'),
      },
      (t) => [
        check('keygate_webhook_endpoints_enabled_check', sql`enabled IN (0, 1)`),
        index('keygate_webhook_endpoints_account').on(t.accountId, t.createdAt),
      ],
    ),
    keygateWebhookDeliveries: sqliteTable(
      'keygate_webhook_deliveries',
      {
        id: text('id').primaryKey(),
        eventId: text('event_id').notNull(),
        endpointId: text('endpoint_id').notNull(),
        accountId: text('account_id').notNull(),
        eventType: text('event_type').notNull(),
        status: text('status').$type<'pending' | 'delivered' | 'failed'>().notNull(),
        attempts: integer('attempts').notNull().default(0),
        lastStatusCode: integer('last_status_code'),
        lastError: text('last_error'),
        lastAttemptAt: text('last_attempt_at'),
        nextAttemptAt: text('next_attempt_at'),
        leaseToken: text('lease_token'),
        leasedUntil: text('leased_until'),
        createdAt: text('created_at').notNull(),
        deliveredAt: text('delivered_at'),
      },
      (t) => [
        check('keygate_webhook_deliveries_status_check', sql`status IN ('pending', 'delivered', 'failed')`),
        index('keygate_webhook_deliveries_due').on(t.nextAttemptAt).where(sql`status = 'pending'`),
        index('keygate_webhook_deliveries_account').on(t.accountId, t.id),
        index('keygate_webhook_deliveries_event').on(t.eventId),
      ],
    ),
    keygateRateLimits: sqliteTable(
      'keygate_rate_limits',
      {
        keyId: text('key_id').primaryKey(),
        windowEnd: epochMs('window_end').notNull(),
        used: integer('used').notNull(),
        allowed: integer('allowed', { mode: 'boolean' }).notNull(),
      },
      () => [
        check('keygate_rate_limits_used_check', sql`used >= 0`),
        check('keygate_rate_limits_allowed_check', sql`allowed IN (0, 1)`),
      ],
    ),
    keygateCreditBalances: sqliteTable(
      'keygate_credit_balances',
      {
        accountId: text('account_id').primaryKey(),
        available: integer('available').notNull(),
      },
      () => [check('keygate_credit_balances_available_check', sql`available >= 0 AND available <= 9007199254740991`)],
    ),
    keygateCreditHolds: sqliteTable(
      'keygate_credit_holds',
      {
        id: text('id').primaryKey(),
        accountId: text('account_id').notNull(),
        amount: integer('amount').notNull(),
        keyId: text('key_id'),
        state: text('state').$type<'open' | 'settled' | 'released' | 'lapsed'>().notNull(),
        charged: integer('charged'),
        createdAt: text('created_at').notNull(),
        expiresAt: epochMs('expires_at').notNull(),
        closedAt: text('closed_at'),
      },
      (t) => [
        check('keygate_credit_holds_amount_check', sql`amount > 0`),
        check('keygate_credit_holds_state_check', sql`state IN ('open', 'settled', 'released', 'lapsed')`),
        check('keygate_credit_holds_charged_check', sql`charged >= 0 AND charged <= amount`),
        index('keygate_credit_holds_open').on(t.accountId, t.expiresAt).where(sql`state = 'open'`),
        index('keygate_credit_holds_closed').on(t.closedAt).where(sql`closed_at IS NOT NULL`),
      ],
    ),
    keygateCreditEntries: sqliteTable(
      'keygate_credit_entries',
      {
        seq: integer('seq').primaryKey({ autoIncrement: true }),
        accountId: text('account_id').notNull(),
        kind: text('kind').$type<'top_up' | 'charge'>().notNull(),
        amount: integer('amount').notNull(),
        balance: integer('balance').notNull(),
        keyId: text('key_id'),
        reference: text('reference'),
        holdId: text('hold_id'),
        createdAt: text('created_at').notNull(),
      },
      (t) => [
        check('keygate_credit_entries_kind_check', sql`kind IN ('top_up', 'charge')`),
        check('keygate_credit_entries_balance_check', sql`balance >= 0`),
        check(
          'keygate_credit_entries_check',
          sql`(kind = 'top_up' AND amount > 0) OR (kind = 'charge' AND amount < 0)`,
        ),
        index('keygate_credit_entries_account').on(t.accountId, sql`seq DESC`),
        uniqueIndex('keygate_credit_entries_reference').on(t.accountId, t.reference),
        uniqueIndex('keygate_credit_entries_hold').on(t.holdId),
      ],
    ),
  };
}
