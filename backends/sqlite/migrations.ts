// The key store's schema lives in the SQL core, shared with D1; the limiter's and ledger's tables stay here.
export { KEY_STORE_MIGRATIONS } from '../sql/sqlite/migrations.js';

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
 * - `keygate_credit_holds`: every hold, open or closed (`state`) until `prune` deletes it (by
 *   `closed_at`, indexed); `expires_at` in epoch ms. Only open holds count against the balance.
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
  // What `prune` deletes: closed holds by when they closed (an open hold has no `closed_at`).
  `CREATE INDEX IF NOT EXISTS keygate_credit_holds_closed
    ON keygate_credit_holds (closed_at) WHERE closed_at IS NOT NULL`,
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
