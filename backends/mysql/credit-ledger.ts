import {
  type CreditBalance,
  type CreditEntry,
  type CreditLedger,
  CreditLedgerUnavailableError,
  type CreditReconciliation,
  type EntriesOptions,
  type HoldOptions,
  type HoldResult,
  KeyStoreUnavailableError,
  type SettleResult,
  type TopUpOptions,
} from 'keygate';
import {
  amountOverflow,
  amountOverHold,
  CAPABILITIES,
  type Capabilities,
  type Capable,
  DEFAULT_LEDGER_TIMEOUT_MS,
  validCreditAccount,
  validEntriesArgs,
  validHoldArgs,
  validHoldId,
  validSettleArgs,
  validTimeoutMs,
  validTopUpArgs,
  withLedgerDeadline,
} from 'keygate/store-kit';
import type { Pool } from 'mysql2/promise';
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
}

type Int = string | number;

interface EntryRow {
  seq: Int;
  account_id: string;
  kind: CreditEntry['kind'];
  amount: Int;
  balance: Int;
  key_id: string | null;
  reference: string | null;
  created_at: string;
}

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
 * ended. A call that timed out may still complete in the database: a hold taken that way lapses after
 * its `ttlMs`.
 *
 * @example
 * const ledger = new MysqlCreditLedger({ client: pool });
 * await ledger.migrate();
 * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' });
 * const held = await ledger.hold('acct_1', 3, { keyId: key.id });
 * if (held.ok) await ledger.settle(held.holdId);
 */
export class MysqlCreditLedger implements CreditLedger, Capable {
  /** Its `deadline`: each call settles within `timeoutMs`. */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly tablePrefix: string;
  /** Milliseconds a call may take before it rejects. */
  readonly timeoutMs: number;
  private readonly sql: SqlClient;
  private readonly balances: string;
  private readonly holds: string;
  private readonly entriesTable: string;
  private readonly procedures: { hold: string; settle: string; release: string };

  constructor(options: MysqlCreditLedgerOptions) {
    this.sql = sqlClient(options?.client);
    this.tablePrefix = validTablePrefix(options.tablePrefix ?? 'keygate_');
    this.timeoutMs = validTimeoutMs(options.timeoutMs, DEFAULT_LEDGER_TIMEOUT_MS);
    this[CAPABILITIES] = { deadline: this };
    this.balances = `${this.tablePrefix}credit_balances`;
    this.holds = `${this.tablePrefix}credit_holds`;
    this.entriesTable = `${this.tablePrefix}credit_entries`;
    const v = `_v${CREDIT_PROCEDURES_VERSION}`;
    this.procedures = {
      hold: `${this.tablePrefix}credit_hold${v}`,
      settle: `${this.tablePrefix}credit_settle${v}`,
      release: `${this.tablePrefix}credit_release${v}`,
    };
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

  /**
   * Adds `amount` credits to the account and writes a `top_up` entry. With a `reference` already used
   * for this account, changes nothing and returns the balance.
   *
   * @example
   * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' }); // { balance: 500 }, and again: { balance: 500 }
   */
  async topUp(accountId: string, amount: number, options?: TopUpOptions): Promise<CreditBalance> {
    const args = validTopUpArgs(accountId, amount, options);
    const reference = args.reference ?? null;
    return this.call(() =>
      this.sql.transaction(async (q) => {
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
      }),
    );
  }

  /**
   * The account's available balance: top-ups minus charges minus open holds; 0 for an unknown account.
   *
   * @example
   * await ledger.balance('acct_1'); // 497
   */
  async balance(accountId: string): Promise<number> {
    const account = validCreditAccount(accountId);
    return this.call(async () => {
      const { rows } = await this.sql.query<{ available: Int }>(
        `SELECT b.available + COALESCE((SELECT SUM(h.amount) FROM ${this.holds} h WHERE h.account_id = ? AND h.${EXPIRED}), 0)
          AS available FROM ${this.balances} b WHERE b.account_id = ?`,
        [account, account],
      );
      return rows[0] ? Number(rows[0].available) : 0;
    });
  }

  /**
   * Takes `amount` credits from the available balance for `ttlMs`, or nothing when the balance does
   * not cover it (`ok: false`).
   *
   * @example
   * const held = await ledger.hold('acct_1', 3, { keyId: key.id, ttlMs: 30_000 }); // { ok: true, holdId, balance: 497 }
   */
  async hold(accountId: string, amount: number, options?: HoldOptions): Promise<HoldResult> {
    const { accountId: account, amount: credits, keyId, ttlMs } = validHoldArgs(accountId, amount, options);
    return this.call(async (): Promise<HoldResult> => {
      const holdId = newHoldId();
      const { rows } = await this.sql.call<{ ok: Int; available: Int }>(`CALL ${this.procedures.hold}(?, ?, ?, ?, ?)`, [
        account,
        credits,
        holdId,
        keyId ?? null,
        Math.round(ttlMs * 1000),
      ]);
      const row = answered(rows[0], 'hold');
      const balance = Number(row.available);
      return Number(row.ok) === 1 ? { ok: true, holdId, balance } : { ok: false, balance };
    });
  }

  /**
   * Charges `amount` of the hold (0..held, default all) as one `charge` entry (none for 0) and returns
   * the rest; more than the open hold is an `InvalidInputError` naming `amount`. A hold already
   * settled, released or lapsed, or an unknown id (balance 0), changes nothing: `charged` is 0.
   *
   * @example
   * await ledger.settle(held.holdId);    // { charged: 3, balance: 497 }
   * await ledger.settle(held.holdId);    // { charged: 0, balance: 497 }
   */
  async settle(holdId: string, amount?: number): Promise<SettleResult> {
    const { holdId: id, amount: charge } = validSettleArgs(holdId, amount);
    return this.call(async (): Promise<SettleResult> => {
      const { rows } = await this.sql.call<{ state: string; charged: Int; available: Int; held: Int }>(
        `CALL ${this.procedures.settle}(?, ?)`,
        [id, charge ?? null],
      );
      const row = answered(rows[0], 'settle');
      // More than the open hold: the procedure changed nothing of it.
      if (row.state === 'over') throw amountOverHold(charge ?? Number(row.held), Number(row.held));
      return { charged: Number(row.charged), balance: Number(row.available) };
    });
  }

  /**
   * Returns the whole hold to the balance, writing no entry. A hold already settled, released or
   * lapsed, or an unknown id (balance 0), changes nothing.
   *
   * @example
   * await ledger.release(held.holdId); // { balance: 500 }
   */
  async release(holdId: string): Promise<CreditBalance> {
    const id = validHoldId(holdId);
    return this.call(async (): Promise<CreditBalance> => {
      const { rows } = await this.sql.call<{ available: Int }>(`CALL ${this.procedures.release}(?)`, [id]);
      return { balance: Number(answered(rows[0], 'release').available) };
    });
  }

  /**
   * The account's entries, newest first, at most `limit` of them.
   *
   * @example
   * await ledger.entries('acct_1', { limit: 2 }); // [{ kind: 'charge', amount: -3, balance: 497, ... }, { kind: 'top_up', ... }]
   */
  async entries(accountId: string, options?: EntriesOptions): Promise<CreditEntry[]> {
    const { accountId: account, limit } = validEntriesArgs(accountId, options);
    return this.call(async () => {
      const { rows } = await this.sql.query<EntryRow>(
        `SELECT seq, account_id, kind, amount, balance, key_id, reference, created_at
          FROM ${this.entriesTable} WHERE account_id = ? ORDER BY seq DESC LIMIT ${Number(limit)}`,
        [account],
      );
      return rows.map(entryOf);
    });
  }

  /**
   * Sums every entry of the account in the database (one aggregate over its index) and reads its
   * balance and open holds in the same statement, so the figures are of one moment; takes no lock.
   *
   * @example
   * await ledger.reconcile('acct_1'); // { accountId: 'acct_1', entries: 500, balance: 497, held: 3, ok: true }
   */
  async reconcile(accountId: string): Promise<CreditReconciliation> {
    const account = validCreditAccount(accountId);
    return this.call(async () => {
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
      return {
        accountId: account,
        entries: Number(row.entries),
        balance: Number(row.available),
        held: Number(row.held),
        ok,
      };
    });
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

  /**
   * Runs `work` under the deadline. The SQL client reports a database failure as the key store's
   * error; the ledger reports it as its own, with the database's error as `cause`.
   */
  private call<T>(work: () => Promise<T>): Promise<T> {
    return withLedgerDeadline('MysqlCreditLedger', this.timeoutMs, () =>
      work().catch((err: unknown) => {
        if (!(err instanceof KeyStoreUnavailableError)) throw err;
        throw new CreditLedgerUnavailableError(
          "MysqlCreditLedger failed; the database's error is the cause",
          err.cause,
        );
      }),
    );
  }
}

/** The one row a procedure answers; none is a broken database. */
function answered<R>(row: R | undefined, call: string): R {
  if (!row) throw new CreditLedgerUnavailableError(`MysqlCreditLedger: the ${call} procedure returned no row`);
  return row;
}

function newHoldId(): string {
  return `hold_${crypto.randomUUID().replaceAll('-', '')}`;
}

/** The entry a row holds; its id is `ce_` and the row's sequence number (an account's entries are written under its lock, in order). */
function entryOf(row: EntryRow): CreditEntry {
  const entry: CreditEntry = {
    id: `ce_${row.seq}`,
    accountId: row.account_id,
    kind: row.kind,
    amount: Number(row.amount),
    balance: Number(row.balance),
    createdAt: isoTime(row.created_at),
  };
  if (row.key_id !== null) entry.keyId = row.key_id;
  if (row.reference !== null) entry.reference = row.reference;
  return entry;
}
