// The credit ledger's statements (tables `keygate_credit_*` in ../migrations.ts). Each call runs
// them inside one write transaction, so the file's write lock orders every call on every account.
// Times: `created_at`, `closed_at` ISO text; `expires_at` epoch milliseconds.

/** The credit ledger's statements. */
export const CREDIT_SQL = {
  /** ? account. Creates the account's row (balance 0) if missing. */
  open: 'INSERT INTO keygate_credit_balances (account_id, available) VALUES (?, 0) ON CONFLICT (account_id) DO NOTHING',
  /** ? account. Its available balance; no row for an unknown account. */
  available: 'SELECT available FROM keygate_credit_balances WHERE account_id = ?',
  /** ? closed at, account, now. Lapses the account's expired open holds; their amounts come back. */
  lapse: `UPDATE keygate_credit_holds SET state = 'lapsed', closed_at = ?
      WHERE account_id = ? AND state = 'open' AND expires_at <= ? RETURNING amount`,
  /** ? amount, account. Adds to the balance; the new balance back. */
  credit: 'UPDATE keygate_credit_balances SET available = available + ? WHERE account_id = ? RETURNING available',
  /** ? amount, account, amount. Takes the amount only if the balance covers it; no row when it does not. */
  take: `UPDATE keygate_credit_balances SET available = available - ? WHERE account_id = ? AND available >= ?
      RETURNING available`,
  /** ? account, reference. A row when a top-up of the account used the reference. */
  referenceUsed: 'SELECT 1 AS used FROM keygate_credit_entries WHERE account_id = ? AND reference = ?',
  /** ? account. The credits its open holds take (expired ones included, until they lapse). */
  held: `SELECT coalesce(sum(amount), 0) AS held FROM keygate_credit_holds WHERE account_id = ? AND state = 'open'`,
  /** ? account, kind, amount, balance after, key id, reference, hold id, created at. */
  entry: `INSERT INTO keygate_credit_entries (account_id, kind, amount, balance, key_id, reference, hold_id, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  /** ? id, account, amount, key id, created at, expires at. */
  hold: `INSERT INTO keygate_credit_holds (id, account_id, amount, key_id, state, created_at, expires_at)
      VALUES (?, ?, ?, ?, 'open', ?, ?)`,
  /** ? hold id. Whose hold it is, how much it held and how it stands. */
  findHold: 'SELECT account_id, amount, key_id, state, expires_at FROM keygate_credit_holds WHERE id = ?',
  /** ? state, charged (or null), closed at, hold id. */
  close: 'UPDATE keygate_credit_holds SET state = ?, charged = ?, closed_at = ? WHERE id = ?',
  /** ? now, account. The available balance, counting expired open holds as returned (a read, no lock). */
  balance: `SELECT b.available + coalesce((
        SELECT sum(h.amount) FROM keygate_credit_holds h
        WHERE h.account_id = b.account_id AND h.state = 'open' AND h.expires_at <= ?
      ), 0) AS available
      FROM keygate_credit_balances b WHERE b.account_id = ?`,
  /**
   * ? account, account, account, now, account, now. The sum of the account's entries, its available balance
   * (expired holds as returned) and its open unexpired holds, in one statement (one snapshot).
   */
  reconcile: `SELECT
      (SELECT coalesce(sum(amount), 0) FROM keygate_credit_entries WHERE account_id = ?) AS entries,
      coalesce((SELECT available FROM keygate_credit_balances WHERE account_id = ?), 0) + coalesce((
        SELECT sum(amount) FROM keygate_credit_holds WHERE account_id = ? AND state = 'open' AND expires_at <= ?
      ), 0) AS available,
      (SELECT coalesce(sum(amount), 0) FROM keygate_credit_holds
        WHERE account_id = ? AND state = 'open' AND expires_at > ?) AS held`,
  /** ? expired at or before (epoch ms), limit. Accounts with an open hold expired that long ago. */
  idleAccounts: `SELECT DISTINCT account_id FROM keygate_credit_holds WHERE state = 'open' AND expires_at <= ? LIMIT ?`,
  /** ? account, now. Lapses the account's expired open holds as `lapse` does, but dated at their expiry. */
  lapseAtExpiry: `UPDATE keygate_credit_holds
      SET state = 'lapsed', closed_at = strftime('%Y-%m-%dT%H:%M:%fZ', expires_at / 1000.0, 'unixepoch')
      WHERE account_id = ? AND state = 'open' AND expires_at <= ? RETURNING amount`,
  /** ? closed at or before (ISO), limit. Deletes closed holds that closed that long ago; a row per hold. */
  prune: `DELETE FROM keygate_credit_holds WHERE id IN (
        SELECT id FROM keygate_credit_holds WHERE closed_at <= ? ORDER BY closed_at LIMIT ?
      ) RETURNING 1 AS gone`,
  /** ? account, limit. The newest entries first. */
  entries: `SELECT seq, account_id, kind, amount, balance, key_id, reference, created_at
      FROM keygate_credit_entries WHERE account_id = ? ORDER BY seq DESC LIMIT ?`,
} as const;
