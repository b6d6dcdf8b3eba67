/**
 * Every table keygate keeps in MySQL 8 or MariaDB 10.6+, in one place: the key store's (versioned, see
 * {@link keyStoreMigrations}), the rate limiter's ({@link rateLimitTables}) and the credit ledger's
 * ({@link creditTables}). Each list is a function of the table prefix (`keygate_` by default), so
 * `<prefix>keys`, `<prefix>usage`, ... Only SQL that both servers accept: `utf8mb4_bin` everywhere
 * (ids and account ids compare byte by byte, as in PostgreSQL), times as `DATETIME(3)` in UTC, JSON
 * columns as `JSON` (a checked LONGTEXT in MariaDB), indexes declared inside `CREATE TABLE` (MySQL 8
 * has no `CREATE INDEX IF NOT EXISTS`), and no partial indexes.
 *
 * DDL in MySQL commits as it goes, so every statement here can run again after a half-finished
 * migration: tables are `CREATE TABLE IF NOT EXISTS`, a trigger is dropped (if present) and created.
 */

const TABLE = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';

/**
 * The key store's schema, one entry per version, each a list of statements for the prefix `p`. Never
 * edit a released entry: add the next version. `MysqlKeyStore.migrate()` and
 * `MysqlDashboardStore.migrate()` run them, recording versions in `<prefix>migrations`.
 *
 * @example
 * for (const statement of keyStoreMigrations('keygate_')[0]!) await pool.query(statement);
 */
export function keyStoreMigrations(p: string): readonly (readonly string[])[] {
  return [
    [
      `CREATE TABLE IF NOT EXISTS ${p}keys (
        id VARCHAR(255) NOT NULL PRIMARY KEY,
        hash VARCHAR(128) NOT NULL,
        account_id VARCHAR(255) NOT NULL,
        name TEXT NOT NULL,
        mode VARCHAR(8) NOT NULL CHECK (mode IN ('live', 'test')),
        status VARCHAR(16) NOT NULL CHECK (status IN ('active', 'suspended', 'revoked')),
        permissions JSON NOT NULL,
        allowed_ips JSON NOT NULL,
        hint VARCHAR(255) NOT NULL,
        created_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        expires_at DATETIME(3) NULL,
        revoked_at DATETIME(3) NULL,
        rotated_from VARCHAR(255) NULL,
        rotated_to VARCHAR(255) NULL,
        metadata JSON NOT NULL,
        version INT NOT NULL CHECK (version >= 1),
        rate_limit JSON NULL,
        suspended_at DATETIME(3) NULL,
        suspended_reason TEXT NULL,
        UNIQUE KEY keys_hash (hash),
        KEY keys_account (account_id, created_at)
      ) ${TABLE}`,
      // Revocation is permanent even for a hand-written UPDATE: the database refuses to change a revoked row.
      `DROP TRIGGER IF EXISTS ${p}keys_revoked_is_final`,
      `CREATE TRIGGER ${p}keys_revoked_is_final BEFORE UPDATE ON ${p}keys FOR EACH ROW
      BEGIN
        IF OLD.status = 'revoked' THEN
          SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'keygate: a revoked key can no longer be changed';
        END IF;
      END`,
      // Usage statistics: counts are added by upsert, so several processes flushing add up exactly.
      `CREATE TABLE IF NOT EXISTS ${p}usage (
        key_id VARCHAR(255) NOT NULL,
        account_id VARCHAR(255) NOT NULL,
        day DATE NOT NULL,
        outcome VARCHAR(64) NOT NULL,
        count BIGINT NOT NULL CHECK (count >= 0),
        PRIMARY KEY (key_id, day, outcome)
      ) ${TABLE}`,
      `CREATE TABLE IF NOT EXISTS ${p}key_activity (
        key_id VARCHAR(255) NOT NULL PRIMARY KEY,
        last_used_at DATETIME(3) NOT NULL,
        last_used_ip VARCHAR(128) NULL
      ) ${TABLE}`,
      // Single-use tokens of the dashboard (sign-in links, ended sessions).
      `CREATE TABLE IF NOT EXISTS ${p}used_tokens (
        token_id VARCHAR(255) NOT NULL PRIMARY KEY,
        expires_at DATETIME(3) NOT NULL,
        KEY used_tokens_expiry (expires_at)
      ) ${TABLE}`,
      // The audit log, append-only: triggers refuse UPDATE and DELETE (TRUNCATE fires no trigger in
      // MySQL: keep DROP from the application's user). Ids sort by time as bytes (see auditId).
      `CREATE TABLE IF NOT EXISTS ${p}audit (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        at DATETIME(3) NOT NULL,
        account_id VARCHAR(255) NOT NULL,
        key_id VARCHAR(255) NULL,
        action VARCHAR(64) NOT NULL,
        actor_type VARCHAR(16) NOT NULL CHECK (actor_type IN ('dashboard', 'cli', 'api')),
        actor_id VARCHAR(255) NULL,
        changes JSON NULL,
        address VARCHAR(128) NULL,
        KEY audit_account (account_id, id),
        KEY audit_key (key_id, id)
      ) ${TABLE}`,
      `DROP TRIGGER IF EXISTS ${p}audit_no_update`,
      `CREATE TRIGGER ${p}audit_no_update BEFORE UPDATE ON ${p}audit FOR EACH ROW
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'keygate: the audit log is append-only; UPDATE on ${p}audit is refused'`,
      `DROP TRIGGER IF EXISTS ${p}audit_no_delete`,
      `CREATE TRIGGER ${p}audit_no_delete BEFORE DELETE ON ${p}audit FOR EACH ROW
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'keygate: the audit log is append-only; DELETE on ${p}audit is refused'`,
      // The outbox: events written in the transaction of the key write that caused them, with one
      // delivery per matching endpoint; dispatchers claim deliveries with FOR UPDATE SKIP LOCKED and a lease.
      `CREATE TABLE IF NOT EXISTS ${p}outbox (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        account_id VARCHAR(255) NOT NULL,
        type VARCHAR(128) NOT NULL,
        at DATETIME(3) NOT NULL,
        data JSON NOT NULL
      ) ${TABLE}`,
      `CREATE TABLE IF NOT EXISTS ${p}webhook_endpoints (
        id VARCHAR(255) NOT NULL PRIMARY KEY,
        account_id VARCHAR(255) NOT NULL,
        url TEXT NOT NULL,
        secret VARCHAR(255) NOT NULL,
        event_types JSON NOT NULL,
        enabled BOOLEAN NOT NULL,
        created_at DATETIME(3) NOT NULL,
        disabled_at DATETIME(3) NULL,
        failing_since DATETIME(3) NULL,
        KEY webhook_endpoints_account (account_id, created_at)
      ) ${TABLE}`,
      `CREATE TABLE IF NOT EXISTS ${p}webhook_deliveries (
        id VARCHAR(480) NOT NULL PRIMARY KEY,
        event_id VARCHAR(64) NOT NULL,
        endpoint_id VARCHAR(255) NOT NULL,
        account_id VARCHAR(255) NOT NULL,
        event_type VARCHAR(128) NOT NULL,
        status VARCHAR(16) NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts INT NOT NULL DEFAULT 0,
        last_status_code INT NULL,
        last_error TEXT NULL,
        last_attempt_at DATETIME(3) NULL,
        next_attempt_at DATETIME(3) NULL,
        lease_token VARCHAR(128) NULL,
        leased_until DATETIME(3) NULL,
        created_at DATETIME(3) NOT NULL,
        delivered_at DATETIME(3) NULL,
        KEY webhook_deliveries_due (status, next_attempt_at),
        KEY webhook_deliveries_endpoint (endpoint_id, status),
        KEY webhook_deliveries_account (account_id, id)
      ) ${TABLE}`,
      // The change feed that stands in for LISTEN/NOTIFY: each key write adds a row in its transaction,
      // numbered from the one-row counter, whose row lock is held to COMMIT: numbers commit in order, with
      // no gaps, so a poller that has read up to n has missed nothing below n.
      `CREATE TABLE IF NOT EXISTS ${p}change_counter (
        id TINYINT NOT NULL PRIMARY KEY,
        seq BIGINT NOT NULL
      ) ${TABLE}`,
      `INSERT IGNORE INTO ${p}change_counter (id, seq) VALUES (1, 0)`,
      `CREATE TABLE IF NOT EXISTS ${p}changes (
        seq BIGINT NOT NULL PRIMARY KEY,
        at DATETIME(3) NOT NULL,
        payload TEXT NOT NULL,
        KEY changes_at (at)
      ) ${TABLE}`,
    ],
    // 2: retention (docs/guide/retention.md). The audit log lets a DELETE through only for an entry
    // older than the cutoff `prune` recorded (one row, only ever moved later); UPDATE stays refused.
    // Indexes for deleting by age in batches: audit entries and outbox events by time, usage by day,
    // deliveries by event.
    [
      `CREATE TABLE IF NOT EXISTS ${p}audit_retention (
        id TINYINT NOT NULL PRIMARY KEY CHECK (id = 1),
        cutoff DATETIME(3) NOT NULL
      ) ${TABLE}`,
      `INSERT IGNORE INTO ${p}audit_retention (id, cutoff) VALUES (1, '1970-01-01 00:00:00.000')`,
      `DROP TRIGGER IF EXISTS ${p}audit_no_delete`,
      `CREATE TRIGGER ${p}audit_no_delete BEFORE DELETE ON ${p}audit FOR EACH ROW
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM ${p}audit_retention WHERE id = 1 AND cutoff > OLD.at) THEN
          SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'keygate: the audit log is append-only; DELETE on ${p}audit is refused';
        END IF;
      END`,
      ...addIndex(`${p}audit`, 'audit_at', 'at'),
      ...addIndex(`${p}usage`, 'usage_day', 'day'),
      ...addIndex(`${p}outbox`, 'outbox_at', 'at, id'),
      ...addIndex(`${p}webhook_deliveries`, 'webhook_deliveries_event', 'event_id'),
    ],
  ];
}

/**
 * Adds an index to a table unless it has one of that name, so that a migration half done (DDL in
 * MySQL commits as it goes) can run again: MySQL 8 has no `CREATE INDEX IF NOT EXISTS`. Four
 * statements on one session (the migration's): the ALTER, or a no-op, chosen from the catalog.
 *
 * @example
 * addIndex('keygate_usage', 'usage_day', 'day') // SET @keygate_ddl = IF(...), PREPARE, EXECUTE, DEALLOCATE
 */
function addIndex(table: string, name: string, columns: string): string[] {
  return [
    `SET @keygate_ddl = IF(
      (SELECT COUNT(*) FROM information_schema.statistics
        WHERE table_schema = DATABASE() AND table_name = '${table}' AND index_name = '${name}') = 0,
      'ALTER TABLE ${table} ADD INDEX ${name} (${columns})',
      'DO 0')`,
    'PREPARE keygate_ddl FROM @keygate_ddl',
    'EXECUTE keygate_ddl',
    'DEALLOCATE PREPARE keygate_ddl',
  ];
}

/**
 * The rate limiter's table for the prefix `p`, created by `MysqlRateLimiter.migrate()`: one row per
 * key, its window's end (UTC, the database's clock), the units used, and the latest request's outcome.
 *
 * @example
 * for (const statement of rateLimitTables('keygate_')) await pool.query(statement);
 */
export function rateLimitTables(p: string): readonly string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${p}rate_limits (
      key_id VARCHAR(512) NOT NULL PRIMARY KEY,
      window_end DATETIME(3) NOT NULL,
      used BIGINT NOT NULL CHECK (used >= 0),
      allowed BOOLEAN NOT NULL,
      KEY rate_limits_window_end (window_end)
    ) ${TABLE}`,
  ];
}

/**
 * The credit ledger's tables for the prefix `p`, created by `MysqlCreditLedger.migrate()`.
 *
 * - `<p>credit_balances`: one row per account, its available balance (top-ups - charges - open holds),
 *   never past 2**53 - 1. Every call that changes an account locks this row first (`FOR UPDATE`), so
 *   they run one at a time per account, in every process.
 * - `<p>credit_holds`: every hold, open or closed (`state`) until `prune` deletes it (by `closed_at`,
 *   indexed; tables made before that index gain it in `MysqlCreditLedger.migrate()`); only open holds
 *   count against the balance.
 * - `<p>credit_entries`: the ledger, `top_up` (positive) and `charge` (negative) lines, each with the
 *   balance just after it. A reference credits an account once; a hold is charged once.
 *
 * @example
 * for (const statement of creditTables('keygate_')) await pool.query(statement);
 */
export function creditTables(p: string): readonly string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${p}credit_balances (
      account_id VARCHAR(255) NOT NULL PRIMARY KEY,
      available BIGINT NOT NULL CHECK (available >= 0 AND available <= 9007199254740991)
    ) ${TABLE}`,
    `CREATE TABLE IF NOT EXISTS ${p}credit_holds (
      id VARCHAR(255) NOT NULL PRIMARY KEY,
      account_id VARCHAR(255) NOT NULL,
      amount BIGINT NOT NULL CHECK (amount > 0),
      key_id VARCHAR(512) NULL,
      state VARCHAR(16) NOT NULL CHECK (state IN ('open', 'settled', 'released', 'lapsed')),
      charged BIGINT NULL,
      created_at DATETIME(3) NOT NULL,
      expires_at DATETIME(3) NOT NULL,
      closed_at DATETIME(3) NULL,
      KEY credit_holds_open (account_id, state, expires_at),
      KEY credit_holds_closed (closed_at)
    ) ${TABLE}`,
    `CREATE TABLE IF NOT EXISTS ${p}credit_entries (
      seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
      account_id VARCHAR(255) NOT NULL,
      kind VARCHAR(16) NOT NULL,
      amount BIGINT NOT NULL,
      balance BIGINT NOT NULL CHECK (balance >= 0),
      key_id VARCHAR(512) NULL,
      reference VARCHAR(255) NULL,
      hold_id VARCHAR(255) NULL,
      created_at DATETIME(3) NOT NULL,
      CHECK ((kind = 'top_up' AND amount > 0) OR (kind = 'charge' AND amount < 0)),
      KEY credit_entries_account (account_id, seq),
      UNIQUE KEY credit_entries_reference (account_id, reference),
      UNIQUE KEY credit_entries_hold (hold_id)
    ) ${TABLE}`,
  ];
}
