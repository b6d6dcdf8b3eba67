import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  date,
  datetime,
  index,
  int,
  json,
  mysqlTable,
  primaryKey,
  tinyint,
  uniqueIndex,
} from 'drizzle-orm/mysql-core';

// keygate's MySQL/MariaDB tables as Drizzle `mysql-core` tables: column for column, index for index and
// check for check what `MysqlKeyStore.migrate()` (keyStoreMigrations 1 and 2), `MysqlRateLimiter.migrate()`
// and `MysqlCreditLedger.migrate()` create (backends/mysql/migrations.ts), for a table prefix. drizzle-kit
// writes no table options, so every text column carries `utf8mb4_bin` itself (ids compare byte by byte
// whatever the database's default). Checks are named as MariaDB names keygate's unnamed ones (a column's
// check after its column, a table's `CONSTRAINT_1`). test/drizzle/mysql-kit.test.ts compares the catalogs;
// a change to that DDL must be made here too.

const BIN = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/** `VARCHAR(n)` in `utf8mb4_bin`. */
const varchar = (name: string, length: number) =>
  customType<{ data: string; driverData: string }>({ dataType: () => `varchar(${length}) ${BIN}` })(name);
/** `TEXT` in `utf8mb4_bin`. */
const text = customType<{ data: string; driverData: string }>({ dataType: () => `text ${BIN}` });
/** `DATETIME(3)`, UTC, read as the text MySQL returns (`2026-01-02 03:04:05.678`). */
const time = (name: string) => datetime(name, { fsp: 3, mode: 'string' });
const count = (name: string) => bigint(name, { mode: 'number' });

/** keygate's MySQL tables for the table prefix `p`, one property per table. */
export function mysqlTables(p: string) {
  return {
    keygateMigrations: mysqlTable(`${p}migrations`, {
      version: int('version').notNull().primaryKey(),
      appliedAt: time('applied_at').notNull(),
    }),
    keygateKeys: mysqlTable(
      `${p}keys`,
      {
        id: varchar('id', 255).notNull().primaryKey(),
        hash: varchar('hash', 128).notNull(),
        accountId: varchar('account_id', 255).notNull(),
        name: text('name').notNull(),
        mode: varchar('mode', 8).$type<'live' | 'test'>().notNull(),
        status: varchar('status', 16).$type<'active' | 'suspended' | 'revoked'>().notNull(),
        permissions: json('permissions').$type<string[]>().notNull(),
        allowedIps: json('allowed_ips').$type<string[]>().notNull(),
        hint: varchar('hint', 255).notNull(),
        createdAt: time('created_at').notNull(),
        updatedAt: time('updated_at').notNull(),
        expiresAt: time('expires_at'),
        revokedAt: time('revoked_at'),
        rotatedFrom: varchar('rotated_from', 255),
        rotatedTo: varchar('rotated_to', 255),
        metadata: json('metadata').$type<Record<string, unknown>>().notNull(),
        version: int('version').notNull(),
        rateLimit: json('rate_limit').$type<{ limit: number; windowMs: number }>(),
        suspendedAt: time('suspended_at'),
        suspendedReason: text('suspended_reason'),
      },
      (t) => [
        check('mode', sql`mode IN ('live', 'test')`),
        check('status', sql`status IN ('active', 'suspended', 'revoked')`),
        check('version', sql`version >= 1`),
        uniqueIndex('keys_hash').on(t.hash),
        index('keys_account').on(t.accountId, t.createdAt),
      ],
    ),
    keygateUsage: mysqlTable(
      `${p}usage`,
      {
        keyId: varchar('key_id', 255).notNull(),
        accountId: varchar('account_id', 255).notNull(),
        day: date('day', { mode: 'string' }).notNull(),
        outcome: varchar('outcome', 64).notNull(),
        count: count('count').notNull(),
      },
      (t) => [
        primaryKey({ columns: [t.keyId, t.day, t.outcome] }),
        check('count', sql`count >= 0`),
        index('usage_day').on(t.day),
      ],
    ),
    keygateKeyActivity: mysqlTable(`${p}key_activity`, {
      keyId: varchar('key_id', 255).notNull().primaryKey(),
      lastUsedAt: time('last_used_at').notNull(),
      lastUsedIp: varchar('last_used_ip', 128),
    }),
    keygateUsedTokens: mysqlTable(
      `${p}used_tokens`,
      {
        tokenId: varchar('token_id', 255).notNull().primaryKey(),
        expiresAt: time('expires_at').notNull(),
      },
      (t) => [index('used_tokens_expiry').on(t.expiresAt)],
    ),
    keygateAudit: mysqlTable(
      `${p}audit`,
      {
        id: varchar('id', 64).notNull().primaryKey(),
        at: time('at').notNull(),
        accountId: varchar('account_id', 255).notNull(),
        keyId: varchar('key_id', 255),
        action: varchar('action', 64).notNull(),
        actorType: varchar('actor_type', 16).$type<'dashboard' | 'cli' | 'api'>().notNull(),
        actorId: varchar('actor_id', 255),
        changes: json('changes'),
        address: varchar('address', 128),
      },
      (t) => [
        check('actor_type', sql`actor_type IN ('dashboard', 'cli', 'api')`),
        index('audit_account').on(t.accountId, t.id),
        index('audit_key').on(t.keyId, t.id),
        index('audit_at').on(t.at),
      ],
    ),
    keygateAuditRetention: mysqlTable(
      `${p}audit_retention`,
      {
        id: tinyint('id').notNull().primaryKey(),
        cutoff: time('cutoff').notNull(),
      },
      () => [check('id', sql`id = 1`)],
    ),
    keygateOutbox: mysqlTable(
      `${p}outbox`,
      {
        id: varchar('id', 64).notNull().primaryKey(),
        accountId: varchar('account_id', 255).notNull(),
        type: varchar('type', 128).notNull(),
        at: time('at').notNull(),
        data: json('data').notNull(),
      },
      (t) => [index('outbox_at').on(t.at, t.id)],
    ),
    keygateWebhookEndpoints: mysqlTable(
      `${p}webhook_endpoints`,
      {
        id: varchar('id', 255).notNull().primaryKey(),
        accountId: varchar('account_id', 255).notNull(),
        url: text('url').notNull(),
        secret: varchar('secret', 255).notNull(),
        eventTypes: json('event_types').$type<string[]>().notNull(),
        enabled: boolean('enabled').notNull(),
        createdAt: time('created_at').notNull(),
        disabledAt: time('disabled_at'),
        failingSince: time('failing_since'),
      },
      (t) => [index('webhook_endpoints_account').on(t.accountId, t.createdAt)],
    ),
    keygateWebhookDeliveries: mysqlTable(
      `${p}webhook_deliveries`,
      {
        id: varchar('id', 480).notNull().primaryKey(),
        eventId: varchar('event_id', 64).notNull(),
        endpointId: varchar('endpoint_id', 255).notNull(),
        accountId: varchar('account_id', 255).notNull(),
        eventType: varchar('event_type', 128).notNull(),
        status: varchar('status', 16).$type<'pending' | 'delivered' | 'failed'>().notNull(),
        attempts: int('attempts').notNull().default(0),
        lastStatusCode: int('last_status_code'),
        lastError: text('last_error'),
        lastAttemptAt: time('last_attempt_at'),
        nextAttemptAt: time('next_attempt_at'),
        leaseToken: varchar('lease_token', 128),
        leasedUntil: time('leased_until'),
        createdAt: time('created_at').notNull(),
        deliveredAt: time('delivered_at'),
      },
      (t) => [
        check('status', sql`status IN ('pending', 'delivered', 'failed')`),
        index('webhook_deliveries_due').on(t.status, t.nextAttemptAt),
        index('webhook_deliveries_endpoint').on(t.endpointId, t.status),
        index('webhook_deliveries_account').on(t.accountId, t.id),
        index('webhook_deliveries_event').on(t.eventId),
      ],
    ),
    keygateChangeCounter: mysqlTable(`${p}change_counter`, {
      id: tinyint('id').notNull().primaryKey(),
      seq: count('seq').notNull(),
    }),
    keygateChanges: mysqlTable(
      `${p}changes`,
      {
        seq: count('seq').notNull().primaryKey(),
        at: time('at').notNull(),
        payload: text('payload').notNull(),
      },
      (t) => [index('changes_at').on(t.at)],
    ),
    keygateRateLimits: mysqlTable(
      `${p}rate_limits`,
      {
        keyId: varchar('key_id', 512).notNull().primaryKey(),
        windowEnd: time('window_end').notNull(),
        used: count('used').notNull(),
        allowed: boolean('allowed').notNull(),
      },
      (t) => [check('used', sql`used >= 0`), index('rate_limits_window_end').on(t.windowEnd)],
    ),
    keygateCreditBalances: mysqlTable(
      `${p}credit_balances`,
      {
        accountId: varchar('account_id', 255).notNull().primaryKey(),
        available: count('available').notNull(),
      },
      () => [check('available', sql`available >= 0 AND available <= 9007199254740991`)],
    ),
    keygateCreditHolds: mysqlTable(
      `${p}credit_holds`,
      {
        id: varchar('id', 255).notNull().primaryKey(),
        accountId: varchar('account_id', 255).notNull(),
        amount: count('amount').notNull(),
        keyId: varchar('key_id', 512),
        state: varchar('state', 16).$type<'open' | 'settled' | 'released' | 'lapsed'>().notNull(),
        charged: count('charged'),
        createdAt: time('created_at').notNull(),
        expiresAt: time('expires_at').notNull(),
        closedAt: time('closed_at'),
      },
      (t) => [
        check('amount', sql`amount > 0`),
        check('state', sql`state IN ('open', 'settled', 'released', 'lapsed')`),
        index('credit_holds_open').on(t.accountId, t.state, t.expiresAt),
        index('credit_holds_closed').on(t.closedAt),
      ],
    ),
    keygateCreditEntries: mysqlTable(
      `${p}credit_entries`,
      {
        seq: count('seq').notNull().autoincrement().primaryKey(),
        accountId: varchar('account_id', 255).notNull(),
        kind: varchar('kind', 16).$type<'top_up' | 'charge'>().notNull(),
        amount: count('amount').notNull(),
        balance: count('balance').notNull(),
        keyId: varchar('key_id', 512),
        reference: varchar('reference', 255),
        holdId: varchar('hold_id', 255),
        createdAt: time('created_at').notNull(),
      },
      (t) => [
        check('balance', sql`balance >= 0`),
        check('CONSTRAINT_1', sql`(kind = 'top_up' AND amount > 0) OR (kind = 'charge' AND amount < 0)`),
        index('credit_entries_account').on(t.accountId, t.seq),
        uniqueIndex('credit_entries_reference').on(t.accountId, t.reference),
        uniqueIndex('credit_entries_hold').on(t.holdId),
      ],
    ),
  };
}
