/**
 * The credit ledger's tables, created by `PostgresCreditLedger.migrate()`. `S` stands for the quoted
 * schema. Each statement is idempotent (`IF NOT EXISTS`), like the rate limiter's table: a new column
 * or index is a further idempotent statement, appended here.
 *
 * - `keygate_credit_balances`: one row per account, its available balance (top-ups - charges - open
 *   holds), never past 2**53 - 1 (the largest whole number a JavaScript number holds exactly). Every call that changes an account locks this row first, so they run one at a time per
 *   account, in every process.
 * - `keygate_credit_holds`: every hold, open or closed (`state`), kept as the record of what each
 *   request held and how it ended until `prune` deletes it. Only open holds count against the balance.
 * - `keygate_credit_entries`: the ledger, `top_up` (positive) and `charge` (negative) lines, each with
 *   the balance just after it. A reference credits an account once; a hold is charged once.
 *
 * @example
 * for (const statement of CREDIT_TABLES) await q(statement.replaceAll('S.', '"billing".'));
 */
export const CREDIT_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS S.keygate_credit_balances (
    account_id text PRIMARY KEY,
    available bigint NOT NULL CHECK (available >= 0 AND available <= 9007199254740991)
  )`,
  `CREATE TABLE IF NOT EXISTS S.keygate_credit_holds (
    id text PRIMARY KEY,
    account_id text NOT NULL,
    amount bigint NOT NULL CHECK (amount > 0),
    key_id text,
    state text NOT NULL CHECK (state IN ('open', 'settled', 'released', 'lapsed')),
    charged bigint CHECK (charged >= 0 AND charged <= amount),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    closed_at timestamptz
  )`,
  `CREATE INDEX IF NOT EXISTS keygate_credit_holds_open
    ON S.keygate_credit_holds (account_id, expires_at) WHERE state = 'open'`,
  // What `prune` deletes: closed holds by when they closed (an open hold has no `closed_at`).
  `CREATE INDEX IF NOT EXISTS keygate_credit_holds_closed
    ON S.keygate_credit_holds (closed_at) WHERE closed_at IS NOT NULL`,
  `CREATE TABLE IF NOT EXISTS S.keygate_credit_entries (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('top_up', 'charge')),
    amount bigint NOT NULL,
    balance bigint NOT NULL CHECK (balance >= 0),
    key_id text,
    reference text,
    hold_id text,
    created_at timestamptz NOT NULL,
    CHECK ((kind = 'top_up' AND amount > 0) OR (kind = 'charge' AND amount < 0))
  )`,
  `CREATE INDEX IF NOT EXISTS keygate_credit_entries_account
    ON S.keygate_credit_entries (account_id, seq DESC)`,
  `CREATE UNIQUE INDEX IF NOT EXISTS keygate_credit_entries_reference
    ON S.keygate_credit_entries (account_id, reference)`,
  `CREATE UNIQUE INDEX IF NOT EXISTS keygate_credit_entries_hold
    ON S.keygate_credit_entries (hold_id)`,
];

/**
 * The statements of the ledger's calls, for the quoted schema `s`. Times come from the database's
 * clock: `statement_timestamp()`, the moment each statement began (after the account's lock was
 * granted, unlike `now()`, which a transaction fixes at its start), so every process agrees on when a
 * hold lapses.
 *
 * @example
 * const sql = creditStatements('"public"');
 * await q(sql.lock, ['acct_1']);
 */
export function creditStatements(s: string) {
  const balances = `${s}.keygate_credit_balances`;
  const holds = `${s}.keygate_credit_holds`;
  const entries = `${s}.keygate_credit_entries`;
  const expired = 'expires_at <= statement_timestamp()';
  return {
    /** $1 account. Creates the account's row (balance 0) if missing. */
    open: `INSERT INTO ${balances} (account_id, available) VALUES ($1, 0) ON CONFLICT (account_id) DO NOTHING`,
    /** $1 account. Locks the account's row until the transaction ends; no row for an unknown account. */
    lock: `SELECT available FROM ${balances} WHERE account_id = $1 FOR UPDATE`,
    /**
     * $1 account (locked). Lapses its expired open holds and returns their credits; returns the new
     * balance, or no row when nothing lapsed (the balance row is then left unwritten).
     */
    sweep: `WITH lapsed AS (
        UPDATE ${holds} SET state = 'lapsed', closed_at = statement_timestamp()
        WHERE account_id = $1 AND state = 'open' AND ${expired}
        RETURNING amount
      )
      UPDATE ${balances} SET available = available + (SELECT sum(amount) FROM lapsed)
      WHERE account_id = $1 AND EXISTS (SELECT 1 FROM lapsed)
      RETURNING available`,
    /** $1 account (locked), $2 reference or null. Whether a top-up used the reference, and the credits held. */
    credits: `SELECT
        EXISTS (SELECT 1 FROM ${entries} WHERE account_id = $1 AND reference = $2::text) AS used,
        (SELECT coalesce(sum(amount), 0) FROM ${holds} WHERE account_id = $1 AND state = 'open') AS held`,
    /** $1 account (locked), $2 amount, $3 reference or null. Adds the amount and writes the entry. */
    topUp: `WITH credited AS (
        UPDATE ${balances} SET available = available + $2::bigint WHERE account_id = $1
        RETURNING available
      ), entry AS (
        INSERT INTO ${entries} (account_id, kind, amount, balance, reference, created_at)
        SELECT $1, 'top_up', $2::bigint, available, $3::text, statement_timestamp() FROM credited
      )
      SELECT available FROM credited`,
    /**
     * $1 account, $2 amount, $3 hold id, $4 key id or null, $5 ttl in ms: one statement, the whole
     * hold (see `CREDIT_FUNCTIONS`). One row: whether it was taken (`r_ok`), the balance after.
     */
    hold: `SELECT r_ok, r_available FROM ${s}.keygate_credit_hold($1::text, $2::bigint, $3::text, $4::text, $5::bigint)`,
    /**
     * $1 hold id, $2 amount or null (all): one statement, the whole settle. One row: `r_state`
     * (`settled`, `closed`, `unknown` or `over`), `r_charged`, `r_available`, `r_held`.
     */
    settle: `SELECT r_state, r_charged, r_available, r_held FROM ${s}.keygate_credit_settle($1::text, $2::bigint)`,
    /** $1 hold id: one statement, the whole release. One row: `r_state`, `r_available`. */
    release: `SELECT r_state, r_available FROM ${s}.keygate_credit_release($1::text)`,
    /** $1 account. The available balance, counting open holds that have expired as returned (no lock, no write). */
    balance: `SELECT b.available + coalesce((
        SELECT sum(h.amount) FROM ${holds} h
        WHERE h.account_id = $1 AND h.state = 'open' AND h.${expired}
      ), 0) AS available
      FROM ${balances} b WHERE b.account_id = $1`,
    /**
     * $1 account. The sum of all its entries, its available balance (expired holds counted as
     * returned, as `balance` does) and its open unexpired holds, read in one statement (one snapshot,
     * no lock), and whether the sum equals the other two (compared as exact numerics).
     */
    reconcile: `WITH figures AS (
        SELECT
          (SELECT coalesce(sum(amount), 0) FROM ${entries} WHERE account_id = $1) AS entries,
          coalesce((SELECT available FROM ${balances} WHERE account_id = $1), 0) + coalesce((
            SELECT sum(amount) FROM ${holds} WHERE account_id = $1 AND state = 'open' AND ${expired}
          ), 0) AS available,
          (SELECT coalesce(sum(amount), 0) FROM ${holds}
            WHERE account_id = $1 AND state = 'open' AND NOT ${expired}) AS held
      )
      SELECT entries, available, held, entries = available + held AS ok FROM figures`,
    /**
     * $1 age in ms, $2 the most accounts. Lapses the expired open holds of accounts that have one
     * expired longer ago than the age, and returns their credits, as a call on the account would
     * (their balance rows locked; an account another call holds is skipped, that call lapses them),
     * but dating each lapse at its hold's expiry. One row: how many holds it lapsed.
     */
    lapseIdle: `WITH idle AS (
        SELECT b.account_id FROM ${balances} b
        WHERE b.account_id IN (
          SELECT h.account_id FROM ${holds} h
          WHERE h.state = 'open' AND h.expires_at <= statement_timestamp() - $1::float8 * interval '1 millisecond'
          GROUP BY h.account_id LIMIT $2::integer
        )
        ORDER BY b.account_id
        FOR UPDATE SKIP LOCKED
      ), lapsed AS (
        UPDATE ${holds} h SET state = 'lapsed', closed_at = h.expires_at
        FROM idle i WHERE h.account_id = i.account_id AND h.state = 'open' AND h.${expired}
        RETURNING h.account_id, h.amount
      ), returned AS (
        UPDATE ${balances} b SET available = b.available + r.amount
        FROM (SELECT account_id, sum(amount) AS amount FROM lapsed GROUP BY account_id) r
        WHERE b.account_id = r.account_id
        RETURNING 1
      )
      SELECT count(*) AS lapsed FROM lapsed`,
    /**
     * $1 age in ms, $2 the most holds. Deletes closed holds that closed longer ago than the age, oldest
     * first along `keygate_credit_holds_closed` (rows another statement holds are skipped). One row:
     * how many it deleted.
     */
    prune: `WITH gone AS (
        DELETE FROM ${holds} WHERE id IN (
          SELECT id FROM ${holds}
          WHERE closed_at <= statement_timestamp() - $1::float8 * interval '1 millisecond'
          ORDER BY closed_at LIMIT $2::integer
          FOR UPDATE SKIP LOCKED
        )
        RETURNING 1
      )
      SELECT count(*) AS deleted FROM gone`,
    /** $1 account, $2 limit. The newest entries first. */
    entries: `SELECT seq, account_id, kind, amount, balance, key_id, reference, created_at
      FROM ${entries} WHERE account_id = $1 ORDER BY seq DESC LIMIT $2::integer`,
  };
}

/** The statements {@link creditStatements} returns. */
export type CreditStatements = ReturnType<typeof creditStatements>;
