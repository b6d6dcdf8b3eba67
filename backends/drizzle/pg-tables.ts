import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  date,
  index,
  integer,
  jsonb,
  type PgTableFn,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

// keygate's PostgreSQL tables as Drizzle `pg-core` tables: column for column, index for index and
// check for check what `PostgresKeyStore.migrate()` (migrations 1..8), `PostgresRateLimiter.migrate()`
// and `PostgresCreditLedger.migrate()` create. Names, order and expressions follow that DDL, so that
// drizzle-kit's CREATE statements give the same catalog (test/drizzle/pg-structure.test.ts compares
// them). A change to that DDL must be made here too: that test fails until it is.

/** `text COLLATE "C"`: ids that sort by time as bytes (see the audit log and the outbox). */
const byteText = customType<{ data: string; driverData: string }>({ dataType: () => 'text COLLATE "C"' });

const tz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const count = (name: string) => bigint(name, { mode: 'number' });

/** The tables in one schema, built with that schema's table function (`pgTable` for `public`). */
export function pgTablesWith<S extends string | undefined>(table: PgTableFn<S>) {
  return {
    keygateMigrations: table('keygate_migrations', {
      version: integer('version').primaryKey(),
      appliedAt: tz('applied_at').notNull().defaultNow(),
    }),
    keygateKeys: table(
      'keygate_keys',
      {
        id: text('id').primaryKey(),
        hash: text('hash').notNull(),
        accountId: text('account_id').notNull(),
        name: text('name').notNull(),
        mode: text('mode').$type<'live' | 'test'>().notNull(),
        status: text('status').$type<'active' | 'suspended' | 'revoked'>().notNull(),
        permissions: jsonb('permissions').$type<string[]>().notNull(),
        allowedIps: jsonb('allowed_ips').$type<string[]>().notNull(),
        hint: text('hint').notNull(),
        createdAt: tz('created_at').notNull(),
        updatedAt: tz('updated_at').notNull(),
        expiresAt: tz('expires_at'),
        revokedAt: tz('revoked_at'),
        rotatedFrom: text('rotated_from'),
        rotatedTo: text('rotated_to'),
        metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull(),
        version: integer('version').notNull(),
        rateLimit: jsonb('rate_limit').$type<{ limit: number; windowMs: number }>(),
        suspendedAt: tz('suspended_at'),
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
    keygateUsage: table(
      'keygate_usage',
      {
        keyId: text('key_id').notNull(),
        accountId: text('account_id').notNull(),
        day: date('day', { mode: 'string' }).notNull(),
        outcome: text('outcome').notNull(),
        count: count('count').notNull(),
      },
      (t) => [
        primaryKey({ name: 'keygate_usage_pkey', columns: [t.keyId, t.day, t.outcome] }),
        check('keygate_usage_count_check', sql`count >= 0`),
        index('keygate_usage_day').on(t.day),
      ],
    ),
    keygateKeyActivity: table('keygate_key_activity', {
      keyId: text('key_id').primaryKey(),
      lastUsedAt: tz('last_used_at').notNull(),
      lastUsedIp: text('last_used_ip'),
    }),
    keygateUsedTokens: table(
      'keygate_used_tokens',
      {
        tokenId: text('token_id').primaryKey(),
        expiresAt: tz('expires_at').notNull(),
      },
      (t) => [index('keygate_used_tokens_expiry').on(t.expiresAt)],
    ),
    keygateAudit: table(
      'keygate_audit',
      {
        id: byteText('id').primaryKey(),
        at: tz('at').notNull(),
        accountId: text('account_id').notNull(),
        keyId: text('key_id'),
        action: text('action').notNull(),
        actorType: text('actor_type').$type<'dashboard' | 'cli' | 'api'>().notNull(),
        actorId: text('actor_id'),
        changes: jsonb('changes'),
        address: text('address'),
      },
      (t) => [
        check('keygate_audit_actor_type_check', sql`actor_type IN ('dashboard', 'cli', 'api')`),
        index('keygate_audit_account').on(t.accountId, t.id),
        index('keygate_audit_key').on(t.keyId, t.id).where(sql`key_id IS NOT NULL`),
        index('keygate_audit_at').on(t.at),
      ],
    ),
    keygateAuditRetention: table(
      'keygate_audit_retention',
      {
        id: smallint('id').primaryKey(),
        cutoff: tz('cutoff').notNull(),
      },
      () => [check('keygate_audit_retention_id_check', sql`id = 1`)],
    ),
    keygateOutbox: table(
      'keygate_outbox',
      {
        id: byteText('id').primaryKey(),
        accountId: text('account_id').notNull(),
        type: text('type').notNull(),
        at: tz('at').notNull(),
        data: jsonb('data').notNull(),
      },
      (t) => [index('keygate_outbox_at').on(t.at, t.id)],
    ),
    keygateWebhookEndpoints: table(
      'keygate_webhook_endpoints',
      {
        id: text('id').primaryKey(),
        accountId: text('account_id').notNull(),
        url: text('url').notNull(),
        secret: text('secret').notNull(),
        eventTypes: jsonb('event_types').$type<string[]>().notNull(),
        enabled: boolean('enabled').notNull(),
        createdAt: tz('created_at').notNull(),
        disabledAt: tz('disabled_at'),
        failingSince: tz('failing_since'),
      },
      (t) => [index('keygate_webhook_endpoints_account').on(t.accountId, t.createdAt)],
    ),
    keygateWebhookDeliveries: table(
      'keygate_webhook_deliveries',
      {
        id: byteText('id').primaryKey(),
        eventId: text('event_id').notNull(),
        endpointId: text('endpoint_id').notNull(),
        accountId: text('account_id').notNull(),
        eventType: text('event_type').notNull(),
        status: text('status').$type<'pending' | 'delivered' | 'failed'>().notNull(),
        attempts: integer('attempts').notNull().default(0),
        lastStatusCode: integer('last_status_code'),
        lastError: text('last_error'),
        lastAttemptAt: tz('last_attempt_at'),
        nextAttemptAt: tz('next_attempt_at'),
        leaseToken: text('lease_token'),
        leasedUntil: tz('leased_until'),
        createdAt: tz('created_at').notNull(),
        deliveredAt: tz('delivered_at'),
      },
      (t) => [
        check('keygate_webhook_deliveries_status_check', sql`status IN ('pending', 'delivered', 'failed')`),
        index('keygate_webhook_deliveries_due').on(t.nextAttemptAt).where(sql`status = 'pending'`),
        index('keygate_webhook_deliveries_account').on(t.accountId, t.id),
        index('keygate_webhook_deliveries_event').on(t.eventId),
      ],
    ),
    keygateRateLimits: table(
      'keygate_rate_limits',
      {
        keyId: text('key_id').primaryKey(),
        windowEnd: tz('window_end').notNull(),
        used: count('used').notNull(),
        allowed: boolean('allowed').notNull(),
        /** The latest take's grant (a leased budget's slice). */
        granted: count('granted').notNull().default(0),
      },
      () => [check('keygate_rate_limits_used_check', sql`used >= 0`)],
    ),
    keygateCreditBalances: table(
      'keygate_credit_balances',
      {
        accountId: text('account_id').primaryKey(),
        available: count('available').notNull(),
      },
      () => [check('keygate_credit_balances_available_check', sql`available >= 0 AND available <= 9007199254740991`)],
    ),
    keygateCreditHolds: table(
      'keygate_credit_holds',
      {
        id: text('id').primaryKey(),
        accountId: text('account_id').notNull(),
        amount: count('amount').notNull(),
        keyId: text('key_id'),
        state: text('state').$type<'open' | 'settled' | 'released' | 'lapsed'>().notNull(),
        charged: count('charged'),
        createdAt: tz('created_at').notNull(),
        expiresAt: tz('expires_at').notNull(),
        closedAt: tz('closed_at'),
      },
      (t) => [
        check('keygate_credit_holds_amount_check', sql`amount > 0`),
        check('keygate_credit_holds_state_check', sql`state IN ('open', 'settled', 'released', 'lapsed')`),
        check('keygate_credit_holds_check', sql`charged >= 0 AND charged <= amount`),
        index('keygate_credit_holds_open').on(t.accountId, t.expiresAt).where(sql`state = 'open'`),
        index('keygate_credit_holds_closed').on(t.closedAt).where(sql`closed_at IS NOT NULL`),
      ],
    ),
    keygateCreditEntries: table(
      'keygate_credit_entries',
      {
        seq: count('seq').primaryKey().generatedAlwaysAsIdentity(),
        accountId: text('account_id').notNull(),
        kind: text('kind').$type<'top_up' | 'charge'>().notNull(),
        amount: count('amount').notNull(),
        balance: count('balance').notNull(),
        keyId: text('key_id'),
        reference: text('reference'),
        holdId: text('hold_id'),
        createdAt: tz('created_at').notNull(),
      },
      (t) => [
        check('keygate_credit_entries_kind_check', sql`kind IN ('top_up', 'charge')`),
        check('keygate_credit_entries_balance_check', sql`balance >= 0`),
        check(
          'keygate_credit_entries_check',
          sql`(kind = 'top_up' AND amount > 0) OR (kind = 'charge' AND amount < 0)`,
        ),
        index('keygate_credit_entries_account').on(t.accountId, t.seq.desc().nullsFirst()),
        uniqueIndex('keygate_credit_entries_reference').on(t.accountId, t.reference),
        uniqueIndex('keygate_credit_entries_hold').on(t.holdId),
      ],
    ),
  };
}
