import { CreditLedgerUnavailableError, type HoldResult, KeygateError } from 'keygate';
import {
  amountOverflow,
  amountOverHold,
  CAPABILITIES,
  DEFAULT_HOLD_TTL_MS,
  DEFAULT_LEDGER_TIMEOUT_MS,
  type HoldArgs,
  type SynchronousLedger,
  type TopUpArgs,
  validTimeoutMs,
} from 'keygate/store-kit';
import { type CreditEntryRow, newHoldId, SqlCreditLedger } from '../sql/credit-ledger-shell.js';
import { type SqliteDatabase, type SqliteDriver, sqliteDriver } from './driver.js';
import { migrateTables } from './migrate.js';
import { CREDIT_TABLES } from './migrations.js';
import { CREDIT_SQL } from './sql/credits.js';

/**
 * Options of {@link SqliteCreditLedger}.
 *
 * @example
 * const options: SqliteCreditLedgerOptions = { database: new Database('keygate.db'), timeoutMs: 500 };
 */
export interface SqliteCreditLedgerOptions {
  /** A `better-sqlite3` Database or a `node:sqlite` DatabaseSync (or a `SqliteDriver`). The caller owns it. */
  database: SqliteDatabase;
  /**
   * Milliseconds a call waits for the file's write lock (SQLite's `busy_timeout`) before it fails
   * with `CreditLedgerUnavailableError`; declared as the ledger's `deadline`. A whole number.
   *
   * @default 1000
   */
  timeoutMs?: number;
  /**
   * Milliseconds a closed hold's row stays in `keygate_credit_holds` before the ledger deletes it by
   * itself (`prune`): after a hold it took, at most once an hour (or per this many milliseconds, if
   * fewer), on a timer of 0 ms so the hold does not wait. `null` or `0`: never; call `prune()`
   * yourself. Entries are never deleted.
   *
   * @default 86_400_000 (one day)
   */
  pruneHoldsAfterMs?: number | null;
}

// Every member of {@link SqliteCreditLedgerOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ database: true, timeoutMs: true, pruneHoldsAfterMs: true } satisfies Record<
  keyof SqliteCreditLedgerOptions,
  true
>);

interface HoldRow {
  account_id: string;
  amount: number;
  key_id: string | null;
  state: 'open' | 'settled' | 'released' | 'lapsed';
  expires_at: number;
}

/**
 * A credit ledger in a SQLite file, exact across every process on the machine that opens it. Every
 * call that changes an account runs in one `BEGIN IMMEDIATE` transaction: SQLite lets one writer at a
 * time hold the file, so calls run one after the other whichever process sends them, and a hold takes
 * its credits with one conditional `UPDATE ... WHERE available >= amount`: no interleaving overdraws
 * an account or loses a credit. Expired holds lapse inside the next call on their account, and
 * `balance()` counts them as returned from the moment they expire (the machine's clock). Closed holds
 * stay in `keygate_credit_holds` with how they ended for `pruneHoldsAfterMs` (a day), then the ledger
 * deletes them (`prune`); entries stay for good.
 *
 * SQLite answers synchronously, so the ledger also offers the `synchronous` capability: `authenticate`
 * and the adapters hold, settle and release without a promise, with the same transactions.
 *
 * @example
 * const ledger = new SqliteCreditLedger({ database });
 * await ledger.migrate();
 * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' });
 * const held = await ledger.hold('acct_1', 3, { keyId: key.id });
 * if (held.ok) await ledger.settle(held.holdId);
 */
export class SqliteCreditLedger extends SqlCreditLedger {
  /** Milliseconds a closed hold is kept before the ledger prunes it by itself; `null`: never. */
  readonly pruneHoldsAfterMs: number | null;
  private readonly driver: SqliteDriver;

  constructor(options: SqliteCreditLedgerOptions) {
    const driver = sqliteDriver(options?.database);
    // A whole number: SQLite's busy_timeout, the lock wait, is the deadline.
    super('SqliteCreditLedger', Math.ceil(validTimeoutMs(options.timeoutMs, DEFAULT_LEDGER_TIMEOUT_MS)), {
      options,
      names: OPTION_NAMES,
    });
    this.driver = driver;
    this.pruneHoldsAfterMs = this.pruneHoldsAfter(options.pruneHoldsAfterMs);
    // What `authenticate` passes was checked before (a stored key's ids, the validated cost and ttl, an
    // id this ledger made), so the synchronous twins skip the argument checks of the public methods.
    const synchronous: SynchronousLedger = {
      holdSync: (accountId, amount, o) =>
        this.guard(() =>
          this.placeHold({ accountId, amount, keyId: o?.keyId, ttlMs: o?.ttlMs ?? DEFAULT_HOLD_TTL_MS }),
        ),
      settleSync: (holdId, amount) => this.guard(() => this.settleHold(holdId, amount)),
      releaseSync: (holdId) => this.guard(() => this.releaseHold(holdId)),
    };
    // Beside the `deadline` every ledger declares.
    Object.assign(this[CAPABILITIES], { synchronous });
  }

  /**
   * Puts the file in WAL mode and creates the ledger's tables and indexes if missing. Idempotent.
   * Never run implicitly.
   *
   * @example
   * await ledger.migrate(); // at start-up, before the first call
   */
  migrate(): Promise<void> {
    return this.call(() => migrateTables(this.driver, CREDIT_TABLES, this.timeoutMs));
  }

  protected applyTopUp(args: TopUpArgs) {
    return this.write((now) => {
      this.driver.run(CREDIT_SQL.open, [args.accountId]);
      const before = this.sweep(args.accountId, now) ?? 0;
      const reference = args.reference ?? null;
      if (reference !== null && this.driver.get(CREDIT_SQL.referenceUsed, [args.accountId, reference])) {
        return { balance: before };
      }
      const held = Number(this.driver.get<{ held: number }>(CREDIT_SQL.held, [args.accountId])?.held ?? 0);
      if (args.amount > Number.MAX_SAFE_INTEGER - (before + held)) throw amountOverflow(args.amount);
      const balance = this.add(args.accountId, args.amount);
      const at = new Date(now).toISOString();
      this.driver.run(CREDIT_SQL.entry, [args.accountId, 'top_up', args.amount, balance, null, reference, null, at]);
      return { balance };
    });
  }

  protected readBalance(account: string) {
    const row = this.driver.get<{ available: number }>(CREDIT_SQL.balance, [Date.now(), account]);
    return row ? Number(row.available) : 0;
  }

  // The synchronous `holdSync` comes here too, so billing through either prunes.
  protected placeHold(args: HoldArgs): HoldResult {
    const held = this.takeHold(args);
    this.pruneSoon();
    return held;
  }

  private takeHold(args: HoldArgs): HoldResult {
    return this.write((now): HoldResult => {
      const before = this.sweep(args.accountId, now);
      if (before === undefined) return { ok: false, balance: 0 };
      const taken = this.driver.get<{ available: number }>(CREDIT_SQL.take, [args.amount, args.accountId, args.amount]);
      if (!taken) return { ok: false, balance: before };
      const holdId = newHoldId();
      const at = new Date(now).toISOString();
      this.driver.run(CREDIT_SQL.hold, [holdId, args.accountId, args.amount, args.keyId ?? null, at, now + args.ttlMs]);
      return { ok: true, holdId, balance: Number(taken.available) };
    });
  }

  protected settleHold(holdId: string, amount: number | undefined) {
    return this.write((now) => {
      const hold = this.driver.get<HoldRow>(CREDIT_SQL.findHold, [holdId]);
      if (!hold) return { charged: 0, balance: 0 };
      const before = this.sweep(hold.account_id, now) ?? 0;
      const held = Number(hold.amount);
      const charged = amount ?? held;
      const open = hold.state === 'open' && Number(hold.expires_at) > now;
      // More than the hold is refused while it is open; a closed hold's settle changes nothing.
      if (charged > held && open) throw amountOverHold(charged, held);
      if (!open) return { charged: 0, balance: before };
      const at = new Date(now).toISOString();
      this.driver.run(CREDIT_SQL.close, ['settled', charged, at, holdId]);
      const balance = this.add(hold.account_id, held - charged);
      if (charged > 0) {
        this.driver.run(CREDIT_SQL.entry, [
          hold.account_id,
          'charge',
          -charged,
          balance,
          hold.key_id,
          null,
          holdId,
          at,
        ]);
      }
      return { charged, balance };
    });
  }

  protected releaseHold(holdId: string) {
    return this.write((now) => {
      const hold = this.driver.get<HoldRow>(CREDIT_SQL.findHold, [holdId]);
      if (!hold) return { balance: 0 };
      const before = this.sweep(hold.account_id, now) ?? 0;
      if (hold.state !== 'open' || Number(hold.expires_at) <= now) return { balance: before };
      this.driver.run(CREDIT_SQL.close, ['released', null, new Date(now).toISOString(), holdId]);
      return { balance: this.add(hold.account_id, Number(hold.amount)) };
    });
  }

  protected readEntries(account: string, limit: number) {
    const rows = this.driver.all<CreditEntryRow>(CREDIT_SQL.entries, [account, limit]);
    return rows.map((row) => this.entryOfRow(row, (time) => new Date(time).toISOString()));
  }

  // The entries' sum, the balance and the open holds in one statement (one snapshot of the file); no lock.
  protected readFigures(account: string) {
    const now = Date.now();
    const params = [account, account, account, now, account, now];
    const row = this.driver.get<{ entries: number; available: number; held: number }>(CREDIT_SQL.reconcile, params);
    const figures = {
      entries: Number(row?.entries ?? 0),
      balance: Number(row?.available ?? 0),
      held: Number(row?.held ?? 0),
    };
    return { accountId: account, ...figures, ok: figures.entries === figures.balance + figures.held };
  }

  // One write transaction: idle accounts' expired holds lapse (dated at their expiry), then closed holds go.
  protected override pruneHolds(olderThanMs: number, limit: number): number {
    return this.write((now) => {
      const cutoffMs = now - olderThanMs;
      const idle = this.driver.all<{ account_id: string }>(CREDIT_SQL.idleAccounts, [cutoffMs, limit]);
      for (const { account_id } of idle) this.lapseAtExpiry(account_id, now);
      return this.driver.all(CREDIT_SQL.prune, [new Date(cutoffMs).toISOString(), limit]).length;
    });
  }

  /** Lapses the account's expired holds as `sweep` does (under the write lock), dated at their expiry. */
  private lapseAtExpiry(account: string, now: number): void {
    const lapsed = this.driver.all<{ amount: number }>(CREDIT_SQL.lapseAtExpiry, [account, now]);
    const returned = lapsed.reduce((sum, h) => sum + Number(h.amount), 0);
    if (returned > 0) this.add(account, returned);
  }

  /** `work`'s answer, or its failure as a keygate error: SQLite's errors become `CreditLedgerUnavailableError`. */
  protected override guard<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      if (err instanceof KeygateError) throw err;
      throw new CreditLedgerUnavailableError("SqliteCreditLedger failed; SQLite's error is the cause", err);
    }
  }

  /** Lapses the account's expired holds (under the write lock): the balance after, or undefined for no account. */
  private sweep(account: string, now: number): number | undefined {
    const row = this.driver.get<{ available: number }>(CREDIT_SQL.available, [account]);
    if (!row) return undefined;
    const lapsed = this.driver.all<{ amount: number }>(CREDIT_SQL.lapse, [new Date(now).toISOString(), account, now]);
    if (lapsed.length === 0) return Number(row.available);
    return this.add(
      account,
      lapsed.reduce((sum, h) => sum + Number(h.amount), 0),
    );
  }

  private add(account: string, amount: number): number {
    if (amount === 0) return Number(this.driver.get<{ available: number }>(CREDIT_SQL.available, [account])?.available);
    return Number(this.driver.get<{ available: number }>(CREDIT_SQL.credit, [amount, account])?.available);
  }

  /** Runs `work` in one write transaction, with the time read once the lock is held. */
  private write<T>(work: (now: number) => T): T {
    return this.driver.transaction(() => work(Date.now()), this.timeoutMs);
  }
}
