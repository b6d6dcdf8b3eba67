// Every table keygate keeps in SQLite, and nothing else: the DDL lives here alone, so that another
// tool (drizzle-kit, a D1 migration folder) can create the same tables from the same text. No class
// runs any of it implicitly: each has its own `migrate()`, called by the application.
//
// Conventions, for every dialect built on this one: timestamps shown to users are ISO 8601 text in
// UTC with milliseconds (`2026-01-02T03:04:05.678Z`, which sorts as time); instants compared by the
// code (expiries, windows, leases) are INTEGER epoch milliseconds; JSON is TEXT; booleans are 0/1.

/**
 * The key store's schema, one entry per version, each a list of statements; `SqliteKeyStore`,
 * `SqliteDashboardStore`, `SqliteAuditLog` and `SqliteOutbox` share it (they read and write the same
 * tables) and record the versions applied in `keygate_migrations`. Never edit a released entry: add
 * the next version.
 *
 * - `keygate_keys`: one row per key; a trigger refuses any change to a revoked row.
 * - `keygate_usage`, `keygate_key_activity`: usage counts per key, day and outcome; the last allowed use.
 * - `keygate_changes`: the change feed. Every key write adds a row in its transaction; each instance
 *   polls the rows after the last it saw. Old rows are pruned by writers, the newest always kept.
 * - `keygate_used_tokens`: the dashboard's single-use tokens.
 * - `keygate_audit`: the audit log, append-only: triggers refuse UPDATE and DELETE.
 * - `keygate_outbox`, `keygate_webhook_endpoints`, `keygate_webhook_deliveries`: the outbox.
 *
 * @example
 * for (const statement of KEY_STORE_MIGRATIONS[0]) driver.exec(statement);
 */
export const KEY_STORE_MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE keygate_keys (
      id TEXT PRIMARY KEY,
      hash TEXT NOT NULL,
      account_id TEXT NOT NULL,
      name TEXT NOT NULL,
      mode TEXT NOT NULL CHECK (mode IN ('live', 'test')),
      status TEXT NOT NULL CHECK (status IN ('active', 'suspended', 'revoked')),
      permissions TEXT NOT NULL,
      allowed_ips TEXT NOT NULL,
      hint TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      expires_at TEXT,
      revoked_at TEXT,
      rotated_from TEXT,
      rotated_to TEXT,
      metadata TEXT NOT NULL,
      version INTEGER NOT NULL CHECK (version >= 1),
      rate_limit TEXT,
      suspended_at TEXT,
      suspended_reason TEXT
    )`,
    'CREATE UNIQUE INDEX keygate_keys_hash ON keygate_keys (hash)',
    'CREATE INDEX keygate_keys_account ON keygate_keys (account_id, created_at)',
    // Revocation is permanent even for a hand-written UPDATE: the database refuses to change a revoked row.
    `CREATE TRIGGER keygate_keys_revoked_is_final BEFORE UPDATE ON keygate_keys
      WHEN OLD.status = 'revoked'
      BEGIN SELECT RAISE(ABORT, 'keygate: the key is revoked and can no longer be changed'); END`,
    `CREATE TABLE keygate_usage (
      key_id TEXT NOT NULL,
      account_id TEXT NOT NULL,
      day TEXT NOT NULL,
      outcome TEXT NOT NULL,
      count INTEGER NOT NULL CHECK (count >= 0),
      PRIMARY KEY (key_id, day, outcome)
    ) WITHOUT ROWID`,
    `CREATE TABLE keygate_key_activity (
      key_id TEXT PRIMARY KEY,
      last_used_at TEXT NOT NULL,
      last_used_ip TEXT
    )`,
    `CREATE TABLE keygate_changes (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      at INTEGER NOT NULL,
      change TEXT NOT NULL
    )`,
    'CREATE TABLE keygate_used_tokens (token_id TEXT PRIMARY KEY, expires_at TEXT NOT NULL)',
    'CREATE INDEX keygate_used_tokens_expiry ON keygate_used_tokens (expires_at)',
    `CREATE TABLE keygate_audit (
      id TEXT PRIMARY KEY,
      at TEXT NOT NULL,
      account_id TEXT NOT NULL,
      key_id TEXT,
      action TEXT NOT NULL,
      actor_type TEXT NOT NULL CHECK (actor_type IN ('dashboard', 'cli', 'api')),
      actor_id TEXT,
      changes TEXT,
      address TEXT
    )`,
    'CREATE INDEX keygate_audit_account ON keygate_audit (account_id, id)',
    'CREATE INDEX keygate_audit_key ON keygate_audit (key_id, id) WHERE key_id IS NOT NULL',
    `CREATE TRIGGER keygate_audit_no_update BEFORE UPDATE ON keygate_audit
      BEGIN SELECT RAISE(ABORT, 'keygate: the audit log is append-only; UPDATE on keygate_audit is refused'); END`,
    `CREATE TRIGGER keygate_audit_no_delete BEFORE DELETE ON keygate_audit
      BEGIN SELECT RAISE(ABORT, 'keygate: the audit log is append-only; DELETE on keygate_audit is refused'); END`,
    `CREATE TABLE keygate_outbox (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      type TEXT NOT NULL,
      at TEXT NOT NULL,
      data TEXT NOT NULL
    )`,
    `CREATE TABLE keygate_webhook_endpoints (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      url TEXT NOT NULL,
      secret TEXT NOT NULL,
      event_types TEXT NOT NULL,
      enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
      created_at TEXT NOT NULL,
      disabled_at TEXT,
      failing_since TEXT
    )`,
    'CREATE INDEX keygate_webhook_endpoints_account ON keygate_webhook_endpoints (account_id, created_at)',
    `CREATE TABLE keygate_webhook_deliveries (
      id TEXT PRIMARY KEY,
      event_id TEXT NOT NULL,
      endpoint_id TEXT NOT NULL,
      account_id TEXT NOT NULL,
      event_type TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts INTEGER NOT NULL DEFAULT 0,
      last_status_code INTEGER,
      last_error TEXT,
      last_attempt_at TEXT,
      next_attempt_at TEXT,
      lease_token TEXT,
      leased_until TEXT,
      created_at TEXT NOT NULL,
      delivered_at TEXT
    )`,
    `CREATE INDEX keygate_webhook_deliveries_due ON keygate_webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    'CREATE INDEX keygate_webhook_deliveries_account ON keygate_webhook_deliveries (account_id, id)',
  ],
];

/**
 * The rate limiter's table, created by `SqliteRateLimiter.migrate()`; idempotent statements. One row
 * per key: the end of its window (epoch ms) and the units used in it.
 *
 * @example
 * for (const statement of RATE_LIMIT_TABLES) driver.exec(statement);
 */
export const RATE_LIMIT_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS keygate_rate_limits (
    key_id TEXT PRIMARY KEY,
    window_end INTEGER NOT NULL,
    used INTEGER NOT NULL CHECK (used >= 0),
    allowed INTEGER NOT NULL CHECK (allowed IN (0, 1))
  )`,
];

/**
 * The credit ledger's tables, created by `SqliteCreditLedger.migrate()`; idempotent statements.
 *
 * - `keygate_credit_balances`: one row per account, its available balance (top-ups - charges - open
 *   holds), never past 2**53 - 1.
 * - `keygate_credit_holds`: every hold, open or closed (`state`); `expires_at` in epoch ms. Only open
 *   holds count against the balance.
 * - `keygate_credit_entries`: the ledger, `top_up` (positive) and `charge` (negative) lines, each with
 *   the balance just after it. A reference credits an account once; a hold is charged once.
 *
 * @example
 * for (const statement of CREDIT_TABLES) driver.exec(statement);
 */
export const CREDIT_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS keygate_credit_balances (
    account_id TEXT PRIMARY KEY,
    available INTEGER NOT NULL CHECK (available >= 0 AND available <= 9007199254740991)
  )`,
  `CREATE TABLE IF NOT EXISTS keygate_credit_holds (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    amount INTEGER NOT NULL CHECK (amount > 0),
    key_id TEXT,
    state TEXT NOT NULL CHECK (state IN ('open', 'settled', 'released', 'lapsed')),
    charged INTEGER CHECK (charged >= 0 AND charged <= amount),
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    closed_at TEXT
  )`,
  `CREATE INDEX IF NOT EXISTS keygate_credit_holds_open
    ON keygate_credit_holds (account_id, expires_at) WHERE state = 'open'`,
  `CREATE TABLE IF NOT EXISTS keygate_credit_entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('top_up', 'charge')),
    amount INTEGER NOT NULL,
    balance INTEGER NOT NULL CHECK (balance >= 0),
    key_id TEXT,
    reference TEXT,
    hold_id TEXT,
    created_at TEXT NOT NULL,
    CHECK ((kind = 'top_up' AND amount > 0) OR (kind = 'charge' AND amount < 0))
  )`,
  `CREATE INDEX IF NOT EXISTS keygate_credit_entries_account
    ON keygate_credit_entries (account_id, seq DESC)`,
  `CREATE UNIQUE INDEX IF NOT EXISTS keygate_credit_entries_reference
    ON keygate_credit_entries (account_id, reference)`,
  `CREATE UNIQUE INDEX IF NOT EXISTS keygate_credit_entries_hold
    ON keygate_credit_entries (hold_id)`,
];
