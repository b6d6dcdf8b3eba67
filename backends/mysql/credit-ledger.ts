import { CreditLedgerUnavailableError, type HoldResult } from 'keygate';
import { amountOverflow, amountOverHold, type HoldArgs, type TopUpArgs } from 'keygate/store-kit';
import type { Pool } from 'mysql2/promise';
import { type CreditEntryRow, newHoldId, SqlCreditLedger } from '../sql/credit-ledger-shell.js';
import { CREDIT_PROCEDURES_VERSION, creditProcedures } from './credit-procedures.js';
import { withMigrationLock } from './migrate.js';
import { creditTables } from './migrations.js';
import { isoTime, type Query, type SqlClient, sqlClient, validTablePrefix } from './sql-client.js';

/**
 * Options of {@link MysqlCreditLedger}.
 *
 * @example
 * const options: MysqlCreditLedgerOptions = { client: pool, tablePrefix: 'billing_', timeoutMs: 500 };
 */
export interface MysqlCreditLedgerOptions {
  /** A `mysql2/promise` Pool (not a single connection). The caller owns it and ends it. */
  client: Pool;
  /** Start of the tables' names (`<prefix>credit_balances`, ...). @default 'keygate_' */
  tablePrefix?: string;
  /**
   * Milliseconds a call may take before it rejects with `CreditLedgerUnavailableError`. The ledger
   * declares it as its `deadline` capability.
   *
   * @default 1000
   */
  timeoutMs?: number;
  /**
   * Milliseconds a closed hold's row stays in `<prefix>credit_holds` before the ledger deletes it by
   * itself (`prune`): after a hold it took, in the background, at most once an hour (or per this
   * many milliseconds, if fewer). `null` or `0`: never; call `prune()` yourself. Entries are never deleted.
   *
   * @default 86_400_000 (one day)
   */
  pruneHoldsAfterMs?: number | null;
}

// Every member of {@link MysqlCreditLedgerOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({
  client: true,
  tablePrefix: true,
  timeoutMs: true,
  pruneHoldsAfterMs: true,
} satisfies Record<keyof MysqlCreditLedgerOptions, true>);

type Int = string | number;

const OPEN = "state = 'open' AND expires_at > UTC_TIMESTAMP(3)";
const EXPIRED = "state = 'open' AND expires_at <= UTC_TIMESTAMP(3)";

/**
 * A credit ledger in MySQL 8 or MariaDB, exact across every process that shares the database. Every
 * call that changes an account runs in one transaction that first locks the account's balance row
 * (`SELECT ... FOR UPDATE`), so calls on one account run one at a time whichever process sends them;
 * a hold then takes its credits only when the balance covers them, so no interleaving overdraws an
 * account or loses a credit (a transaction the server picks as a deadlock victim is rolled back whole
 * and run again). `hold`, `settle` and `release` are one `CALL` each (one round trip): a stored
 * procedure that `migrate()` creates runs the whole transaction. Expired holds lapse inside the next
 * call on their account (no background job), and `balance()` counts them as returned from the moment
 * they expire, by the database's clock. Closed holds stay in `<prefix>credit_holds` with how they
 * ended for `pruneHoldsAfterMs` (a day), then the ledger deletes them (`prune`); entries stay for good.
 * A call that timed out may still complete in the database: a hold taken that way lapses after its
 * `ttlMs`.
 *
 * @example
 * const ledger = new MysqlCreditLedger({ client: pool });
 * await ledger.migrate();
 * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' });
 * const held = await ledger.hold('acct_1', 3, { keyId: key.id });
 * if (held.ok) await ledger.settle(held.holdId);
 */
export class MysqlCreditLedger extends SqlCreditLedger {
  readonly tablePrefix: string;
  /** Milliseconds a closed hold is kept before the ledger prunes it by itself; `null`: never. */
  readonly pruneHoldsAfterMs: number | null;
  private readonly sql: SqlClient;
  private readonly balances: string;
  private readonly holds: string;
  private readonly entriesTable: string;
  private readonly procedures: { hold: string; settle: string; release: string };

  constructor(options: MysqlCreditLedgerOptions) {
    const sql = sqlClient(options?.client);
    const tablePrefix = validTablePrefix(options.tablePrefix ?? 'keygate_');
    super('MysqlCreditLedger', options.timeoutMs, { options, names: OPTION_NAMES });
    this.sql = sql;
    this.tablePrefix = tablePrefix;
    this.balances = `${tablePrefix}credit_balances`;
    this.holds = `${tablePrefix}credit_holds`;
    this.entriesTable = `${tablePrefix}credit_entries`;
    const v = `_v${CREDIT_PROCEDURES_VERSION}`;
    this.procedures = {
      hold: `${tablePrefix}credit_hold${v}`,
      settle: `${tablePrefix}credit_settle${v}`,
      release: `${tablePrefix}credit_release${v}`,
    };
    this.pruneHoldsAfterMs = this.pruneHoldsAfter(options.pruneHoldsAfterMs);
  }

  /**
   * Creates the ledger's tables, indexes and stored procedures if missing (`hold`, `settle` and
   * `release` call the procedures: tables made by an earlier version gain them here; creating them
   * needs the `CREATE ROUTINE` privilege). Idempotent; concurrent callers are serialised by a named lock.
   *
   * @example
   * await ledger.migrate(); // at start-up, before the first call
   */
  async migrate(): Promise<void> {
    await withMigrationLock(this.sql, this.tablePrefix, 'credits', async (q) => {
      for (const statement of creditTables(this.tablePrefix)) await q(statement);
      await addClosedIndex(q, this.holds);
      const { rows } = await q<{ name: string }>(
        `SELECT ROUTINE_NAME AS name FROM information_schema.ROUTINES
          WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME LIKE ?`,
        [`${this.tablePrefix.replaceAll('_', '\\_')}credit\\_%`],
      );
      const present = new Set(rows.map((r) => r.name));
      for (const [name, statement] of creditProcedures(this.tablePrefix)) {
        if (!present.has(name)) await q(statement);
      }
    });
  }

  protected applyTopUp(args: TopUpArgs) {
    const reference = args.reference ?? null;
    return this.sql.transaction(async (q) => {
      await q(`INSERT IGNORE INTO ${this.balances} (account_id, available) VALUES (?, 0)`, [args.accountId]);
      const before = (await this.lockAndSweep(q, args.accountId)) ?? 0;
      if (reference !== null) {
        const { rows } = await q(`SELECT 1 FROM ${this.entriesTable} WHERE account_id = ? AND reference = ?`, [
          args.accountId,
          reference,
        ]);
        if (rows.length > 0) return { balance: before };
      }
      const { rows: held } = await q<{ held: Int }>(
        `SELECT COALESCE(SUM(amount), 0) AS held FROM ${this.holds} WHERE account_id = ? AND state = 'open'`,
        [args.accountId],
      );
      if (args.amount > Number.MAX_SAFE_INTEGER - (before + Number(held[0]?.held ?? 0))) {
        throw amountOverflow(args.amount);
      }
      const after = before + args.amount;
      await q(`UPDATE ${this.balances} SET available = ? WHERE account_id = ?`, [after, args.accountId]);
      await q(
        `INSERT INTO ${this.entriesTable} (account_id, kind, amount, balance, reference, created_at)
          VALUES (?, 'top_up', ?, ?, ?, UTC_TIMESTAMP(3))`,
        [args.accountId, args.amount, after, reference],
      );
      return { balance: after };
    });
  }

  protected async readBalance(account: string) {
    const { rows } = await this.sql.query<{ available: Int }>(
      `SELECT b.available + COALESCE((SELECT SUM(h.amount) FROM ${this.holds} h WHERE h.account_id = ? AND h.${EXPIRED}), 0)
        AS available FROM ${this.balances} b WHERE b.account_id = ?`,
      [account, account],
    );
    return rows[0] ? Number(rows[0].available) : 0;
  }

  // One CALL: the procedure runs the whole transaction.
  protected async placeHold(args: HoldArgs): Promise<HoldResult> {
    const holdId = newHoldId();
    const params = [args.accountId, args.amount, holdId, args.keyId ?? null, Math.round(args.ttlMs * 1000)];
    const { rows } = await this.sql.call<{ ok: Int; available: Int }>(
      `CALL ${this.procedures.hold}(?, ?, ?, ?, ?)`,
      params,
    );
    const row = answered(rows[0], 'hold');
    const balance = Number(row.available);
    this.pruneSoon();
    return Number(row.ok) === 1 ? { ok: true, holdId, balance } : { ok: false, balance };
  }

  protected async settleHold(holdId: string, amount: number | undefined) {
    const { rows } = await this.sql.call<{ state: string; charged: Int; available: Int; held: Int }>(
      `CALL ${this.procedures.settle}(?, ?)`,
      [holdId, amount ?? null],
    );
    const row = answered(rows[0], 'settle');
    // More than the open hold: the procedure changed nothing of it.
    if (row.state === 'over') throw amountOverHold(amount ?? Number(row.held), Number(row.held));
    return { charged: Number(row.charged), balance: Number(row.available) };
  }

  protected async releaseHold(holdId: string) {
    const { rows } = await this.sql.call<{ available: Int }>(`CALL ${this.procedures.release}(?)`, [holdId]);
    return { balance: Number(answered(rows[0], 'release').available) };
  }

  protected async readEntries(account: string, limit: number) {
    const { rows } = await this.sql.query<CreditEntryRow>(
      `SELECT seq, account_id, kind, amount, balance, key_id, reference, created_at
        FROM ${this.entriesTable} WHERE account_id = ? ORDER BY seq DESC LIMIT ${Number(limit)}`,
      [account],
    );
    return rows.map((row) => this.entryOfRow(row, isoTime));
  }

  // One aggregate over the account's index, with its balance and open holds in the same statement,
  // so the figures are of one moment; takes no lock.
  protected async readFigures(account: string) {
    const { rows } = await this.sql.query<{ entries: Int; available: Int; held: Int }>(
      `SELECT
        (SELECT COALESCE(SUM(amount), 0) FROM ${this.entriesTable} WHERE account_id = ?) AS entries,
        COALESCE((SELECT available FROM ${this.balances} WHERE account_id = ?), 0)
          + COALESCE((SELECT SUM(amount) FROM ${this.holds} WHERE account_id = ? AND ${EXPIRED}), 0) AS available,
        (SELECT COALESCE(SUM(amount), 0) FROM ${this.holds} WHERE account_id = ? AND ${OPEN}) AS held`,
      [account, account, account, account],
    );
    const row = rows[0];
    if (!row) throw new CreditLedgerUnavailableError('MysqlCreditLedger: the reconcile statement returned no row');
    // Compared as exact integers: sums past 2**53 stay exact as text.
    const ok = BigInt(String(row.entries)) === BigInt(String(row.available)) + BigInt(String(row.held));
    const figures = { entries: Number(row.entries), balance: Number(row.available), held: Number(row.held) };
    return { accountId: account, ...figures, ok };
  }

  // Idle accounts' expired holds lapse (at their expiry) in one transaction, then closed holds go,
  // by id (so the delete locks those rows alone, no range of the index).
  protected override async pruneHolds(olderThanMs: number, limit: number) {
    const ageUs = Math.round(olderThanMs * 1000);
    await this.sql.transaction((q) => this.lapseIdle(q, ageUs, limit));
    const { rows } = await this.sql.query<{ id: string }>(
      `SELECT id FROM ${this.holds} WHERE closed_at <= UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND
        ORDER BY closed_at LIMIT ${Number(limit)}`,
      [ageUs],
    );
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id).sort();
    // In a transaction of its own, so that a deadlock victim (a call's sweep locks next to these rows) runs again.
    const gone = await this.sql.transaction((q) =>
      q(`DELETE FROM ${this.holds} WHERE id IN (?) AND closed_at IS NOT NULL`, [ids]),
    );
    return gone.affectedRows;
  }

  /**
   * Lapses the expired holds of at most `limit` accounts that have one expired more than `ageUs`
   * microseconds ago, as a call on the account would (its balance row locked first; an account another
   * call holds is skipped, that call lapses them), but dated at each hold's expiry.
   */
  private async lapseIdle(q: Query, ageUs: number, limit: number): Promise<void> {
    // A plain read first: a locking read would lock every hold row it passed, not only the balances.
    const { rows: idle } = await q<{ account_id: string }>(
      `SELECT DISTINCT account_id FROM ${this.holds}
        WHERE state = 'open' AND expires_at <= UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND LIMIT ${Number(limit)}`,
      [ageUs],
    );
    if (idle.length === 0) return;
    const { rows: locked } = await q<{ account_id: string }>(
      `SELECT account_id FROM ${this.balances} WHERE account_id IN (?) ORDER BY account_id FOR UPDATE SKIP LOCKED`,
      [idle.map((r) => r.account_id)],
    );
    if (locked.length === 0) return;
    const accounts = locked.map((r) => r.account_id);
    const { rows: expired } = await q<{ id: string }>(
      `SELECT id FROM ${this.holds} WHERE account_id IN (?) AND ${EXPIRED} FOR UPDATE`,
      [accounts],
    );
    if (expired.length === 0) return;
    const ids = expired.map((h) => h.id);
    await q(`UPDATE ${this.holds} SET state = 'lapsed', closed_at = expires_at WHERE id IN (?)`, [ids]);
    await q(
      `UPDATE ${this.balances} b JOIN (
          SELECT account_id, SUM(amount) AS amount FROM ${this.holds} WHERE id IN (?) GROUP BY account_id
        ) r ON r.account_id = b.account_id
        SET b.available = b.available + r.amount`,
      [ids],
    );
  }

  /**
   * Locks the account's row, then lapses its expired holds (by id, as the locking read found them) and
   * returns their credits: the balance after, or undefined for no account.
   */
  private async lockAndSweep(q: Query, account: string): Promise<number | undefined> {
    const { rows } = await q<{ available: Int }>(
      `SELECT available FROM ${this.balances} WHERE account_id = ? FOR UPDATE`,
      [account],
    );
    if (!rows[0]) return undefined;
    const available = Number(rows[0].available);
    const { rows: expired } = await q<{ id: string; amount: Int }>(
      `SELECT id, amount FROM ${this.holds} WHERE account_id = ? AND ${EXPIRED} FOR UPDATE`,
      [account],
    );
    if (expired.length === 0) return available;
    const returned = expired.reduce((sum, h) => sum + Number(h.amount), 0);
    await q(`UPDATE ${this.holds} SET state = 'lapsed', closed_at = UTC_TIMESTAMP(3) WHERE id IN (?)`, [
      expired.map((h) => h.id),
    ]);
    await q(`UPDATE ${this.balances} SET available = ? WHERE account_id = ?`, [available + returned, account]);
    return available + returned;
  }
}

/**
 * Adds the index `prune` reads (`credit_holds_closed`, on `closed_at`) to a holds table made before
 * it: MySQL 8 has no `ADD INDEX IF NOT EXISTS`, so the catalogue says whether it is there.
 */
async function addClosedIndex(q: Query, holds: string): Promise<void> {
  const { rows } = await q(
    `SELECT 1 FROM information_schema.STATISTICS
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME = 'credit_holds_closed' LIMIT 1`,
    [holds],
  );
  if (rows.length === 0) await q(`ALTER TABLE ${holds} ADD KEY credit_holds_closed (closed_at)`);
}

/** The one row a procedure answers; none is a broken database. */
function answered<R>(row: R | undefined, call: string): R {
  if (!row) throw new CreditLedgerUnavailableError(`MysqlCreditLedger: the ${call} procedure returned no row`);
  return row;
}
