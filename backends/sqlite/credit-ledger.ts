import {
  type CreditBalance,
  type CreditEntry,
  type CreditLedger,
  CreditLedgerUnavailableError,
  type CreditReconciliation,
  type EntriesOptions,
  type HoldOptions,
  type HoldResult,
  KeygateError,
  type SettleResult,
  type TopUpOptions,
} from 'keygate';
import {
  amountOverflow,
  amountOverHold,
  CAPABILITIES,
  type Capabilities,
  type Capable,
  DEFAULT_HOLD_TTL_MS,
  DEFAULT_LEDGER_TIMEOUT_MS,
  type SynchronousLedger,
  validCreditAccount,
  validEntriesArgs,
  validHoldArgs,
  validHoldId,
  validSettleArgs,
  validTimeoutMs,
  validTopUpArgs,
  withLedgerDeadline,
} from 'keygate/store-kit';
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
}

interface EntryRow {
  seq: number;
  account_id: string;
  kind: CreditEntry['kind'];
  amount: number;
  balance: number;
  key_id: string | null;
  reference: string | null;
  created_at: string;
}

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
 * stay in `keygate_credit_holds` with how they ended.
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
export class SqliteCreditLedger implements CreditLedger, Capable {
  /** Its `deadline` (each call waits at most `timeoutMs` for the lock) and `synchronous`. */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds a call may wait for the write lock. */
  readonly timeoutMs: number;
  private readonly driver: SqliteDriver;

  constructor(options: SqliteCreditLedgerOptions) {
    this.driver = sqliteDriver(options?.database);
    this.timeoutMs = Math.ceil(validTimeoutMs(options.timeoutMs, DEFAULT_LEDGER_TIMEOUT_MS));
    // What `authenticate` passes was checked before (a stored key's ids, the validated cost and ttl, an
    // id this ledger made), so the synchronous twins skip the argument checks of the public methods.
    const synchronous: SynchronousLedger = {
      holdSync: (accountId, amount, o) =>
        this.guard(() => this.take(accountId, amount, o?.keyId, o?.ttlMs ?? DEFAULT_HOLD_TTL_MS)),
      settleSync: (holdId, amount) => this.guard(() => this.charge(holdId, amount)),
      releaseSync: (holdId) => this.guard(() => this.give(holdId)),
    };
    this[CAPABILITIES] = { deadline: this, synchronous };
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

  /**
   * Adds `amount` credits to the account and writes a `top_up` entry. With a `reference` already used
   * for this account, changes nothing and returns the balance.
   *
   * @example
   * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' }); // { balance: 500 }, and again: { balance: 500 }
   */
  topUp(accountId: string, amount: number, options?: TopUpOptions): Promise<CreditBalance> {
    return this.call(() => {
      const args = validTopUpArgs(accountId, amount, options);
      return this.write((now) => {
        this.driver.run(CREDIT_SQL.open, [args.accountId]);
        const before = this.sweep(args.accountId, now) ?? 0;
        const reference = args.reference ?? null;
        if (reference !== null && this.driver.get(CREDIT_SQL.referenceUsed, [args.accountId, reference])) {
          return { balance: before };
        }
        const held = Number(this.driver.get<{ held: number }>(CREDIT_SQL.held, [args.accountId])?.held ?? 0);
        if (args.amount > Number.MAX_SAFE_INTEGER - (before + held)) throw amountOverflow(args.amount);
        const balance = this.credit(args.accountId, args.amount);
        this.driver.run(CREDIT_SQL.entry, [
          args.accountId,
          'top_up',
          args.amount,
          balance,
          null,
          reference,
          null,
          new Date(now).toISOString(),
        ]);
        return { balance };
      });
    });
  }

  /**
   * The account's available balance: top-ups minus charges minus open holds; 0 for an unknown account.
   *
   * @example
   * await ledger.balance('acct_1'); // 497
   */
  balance(accountId: string): Promise<number> {
    return this.call(() => {
      const account = validCreditAccount(accountId);
      const row = this.driver.get<{ available: number }>(CREDIT_SQL.balance, [Date.now(), account]);
      return row ? Number(row.available) : 0;
    });
  }

  /**
   * Takes `amount` credits from the available balance for `ttlMs`, or nothing when the balance does
   * not cover it (`ok: false`).
   *
   * @example
   * const held = await ledger.hold('acct_1', 3, { keyId: key.id, ttlMs: 30_000 }); // { ok: true, holdId, balance: 497 }
   */
  hold(accountId: string, amount: number, options?: HoldOptions): Promise<HoldResult> {
    return this.call(() => {
      const args = validHoldArgs(accountId, amount, options);
      return this.take(args.accountId, args.amount, args.keyId, args.ttlMs);
    });
  }

  /**
   * Charges `amount` of the hold (0..held, default all) as one `charge` entry (none for 0) and returns
   * the rest; more than the open hold is an `InvalidInputError` naming `amount`. A hold already
   * settled, released or lapsed, or an unknown id (balance 0), changes nothing: `charged` is 0.
   *
   * @example
   * await ledger.settle(held.holdId); // { charged: 3, balance: 497 }
   */
  settle(holdId: string, amount?: number): Promise<SettleResult> {
    return this.call(() => {
      const args = validSettleArgs(holdId, amount);
      return this.charge(args.holdId, args.amount);
    });
  }

  /**
   * Returns the whole hold to the balance, writing no entry. A hold already settled, released or
   * lapsed, or an unknown id (balance 0), changes nothing.
   *
   * @example
   * await ledger.release(held.holdId); // { balance: 500 }
   */
  release(holdId: string): Promise<CreditBalance> {
    return this.call(() => this.give(validHoldId(holdId)));
  }

  /**
   * The account's entries, newest first, at most `limit` of them.
   *
   * @example
   * await ledger.entries('acct_1', { limit: 2 }); // [{ kind: 'charge', amount: -3, balance: 497, ... }, { kind: 'top_up', ... }]
   */
  entries(accountId: string, options?: EntriesOptions): Promise<CreditEntry[]> {
    return this.call(() => {
      const { accountId: account, limit } = validEntriesArgs(accountId, options);
      return this.driver.all<EntryRow>(CREDIT_SQL.entries, [account, limit]).map(entryOf);
    });
  }

  /**
   * Sums every entry of the account and reads its balance and open holds in the same statement (one
   * snapshot of the file); takes no lock.
   *
   * @example
   * await ledger.reconcile('acct_1'); // { accountId: 'acct_1', entries: 500, balance: 497, held: 3, ok: true }
   */
  reconcile(accountId: string): Promise<CreditReconciliation> {
    return this.call(() => {
      const account = validCreditAccount(accountId);
      const now = Date.now();
      const row = this.driver.get<{ entries: number; available: number; held: number }>(CREDIT_SQL.reconcile, [
        account,
        account,
        account,
        now,
        account,
        now,
      ]);
      const figures = {
        entries: Number(row?.entries ?? 0),
        balance: Number(row?.available ?? 0),
        held: Number(row?.held ?? 0),
      };
      return { accountId: account, ...figures, ok: figures.entries === figures.balance + figures.held };
    });
  }

  private take(account: string, amount: number, keyId: string | undefined, ttlMs: number): HoldResult {
    return this.write((now): HoldResult => {
      const before = this.sweep(account, now);
      if (before === undefined) return { ok: false, balance: 0 };
      const taken = this.driver.get<{ available: number }>(CREDIT_SQL.take, [amount, account, amount]);
      if (!taken) return { ok: false, balance: before };
      const holdId = `hold_${crypto.randomUUID().replaceAll('-', '')}`;
      this.driver.run(CREDIT_SQL.hold, [
        holdId,
        account,
        amount,
        keyId ?? null,
        new Date(now).toISOString(),
        now + ttlMs,
      ]);
      return { ok: true, holdId, balance: Number(taken.available) };
    });
  }

  private charge(holdId: string, amount: number | undefined): SettleResult {
    return this.write((now): SettleResult => {
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
      const balance = this.credit(hold.account_id, held - charged);
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

  private give(holdId: string): CreditBalance {
    return this.write((now): CreditBalance => {
      const hold = this.driver.get<HoldRow>(CREDIT_SQL.findHold, [holdId]);
      if (!hold) return { balance: 0 };
      const before = this.sweep(hold.account_id, now) ?? 0;
      if (hold.state !== 'open' || Number(hold.expires_at) <= now) return { balance: before };
      this.driver.run(CREDIT_SQL.close, ['released', null, new Date(now).toISOString(), holdId]);
      return { balance: this.credit(hold.account_id, Number(hold.amount)) };
    });
  }

  /** Lapses the account's expired holds (under the write lock): the balance after, or undefined for no account. */
  private sweep(account: string, now: number): number | undefined {
    const row = this.driver.get<{ available: number }>(CREDIT_SQL.available, [account]);
    if (!row) return undefined;
    const lapsed = this.driver.all<{ amount: number }>(CREDIT_SQL.lapse, [new Date(now).toISOString(), account, now]);
    if (lapsed.length === 0) return Number(row.available);
    return this.credit(
      account,
      lapsed.reduce((sum, h) => sum + Number(h.amount), 0),
    );
  }

  private credit(account: string, amount: number): number {
    if (amount === 0) return Number(this.driver.get<{ available: number }>(CREDIT_SQL.available, [account])?.available);
    return Number(this.driver.get<{ available: number }>(CREDIT_SQL.credit, [amount, account])?.available);
  }

  /** Runs `work` in one write transaction, with the time read once the lock is held. */
  private write<T>(work: (now: number) => T): T {
    return this.driver.transaction(() => work(Date.now()), this.timeoutMs);
  }

  /** `work`'s answer, or its failure as a keygate error: SQLite's errors become `CreditLedgerUnavailableError`. */
  private guard<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      if (err instanceof KeygateError) throw err;
      throw new CreditLedgerUnavailableError("SqliteCreditLedger failed; SQLite's error is the cause", err);
    }
  }

  /** Runs `work` under the deadline, its failures as keygate errors. */
  private call<T>(work: () => T): Promise<T> {
    return withLedgerDeadline('SqliteCreditLedger', this.timeoutMs, async () => this.guard(work));
  }
}

function entryOf(row: EntryRow): CreditEntry {
  const entry: CreditEntry = {
    id: `ce_${row.seq}`,
    accountId: row.account_id,
    kind: row.kind,
    amount: Number(row.amount),
    balance: Number(row.balance),
    createdAt: new Date(row.created_at).toISOString(),
  };
  if (row.key_id !== null) entry.keyId = row.key_id;
  if (row.reference !== null) entry.reference = row.reference;
  return entry;
}
