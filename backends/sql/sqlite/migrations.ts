// The key store's tables in the SQLite family (SQLite files and D1), and nothing else: the DDL lives
// here alone, so that another tool (drizzle-kit, a D1 migration folder) can create the same tables
// from the same text. The rate limiter's and ledger's tables are in backends/sqlite/migrations.ts.
// No class runs any of it implicitly: each has its own `migrate()`, called by the application.
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
 * - `keygate_audit`: the audit log, append-only: triggers refuse UPDATE, and DELETE of an entry not
 *   older than the cutoff in `keygate_audit_retention` (moved by `prune` only, never back).
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
  // 2: retention (docs/guide/retention.md). The audit log lets a DELETE through only for an entry older
  // than the cutoff `prune` recorded (one row, only ever moved later); UPDATE stays refused. Indexes
  // for deleting by age in batches: audit entries and outbox events by time, usage by day, deliveries
  // by event.
  [
    `CREATE TABLE keygate_audit_retention (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      cutoff TEXT NOT NULL
    )`,
    `INSERT INTO keygate_audit_retention (id, cutoff) VALUES (1, '1970-01-01T00:00:00.000Z')`,
    'DROP TRIGGER keygate_audit_no_delete',
    `CREATE TRIGGER keygate_audit_no_delete BEFORE DELETE ON keygate_audit
      WHEN NOT EXISTS (SELECT 1 FROM keygate_audit_retention WHERE id = 1 AND cutoff > OLD.at)
      BEGIN SELECT RAISE(ABORT, 'keygate: the audit log is append-only; DELETE on keygate_audit is refused (but of an entry older than the retention cutoff)'); END`,
    'CREATE INDEX keygate_audit_at ON keygate_audit (at)',
    'CREATE INDEX keygate_usage_day ON keygate_usage (day)',
    'CREATE INDEX keygate_outbox_at ON keygate_outbox (at, id)',
    'CREATE INDEX keygate_webhook_deliveries_event ON keygate_webhook_deliveries (event_id)',
  ],
];
