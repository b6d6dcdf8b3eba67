import { InvalidInputError } from '#errors';
import { randomBase62 } from '../key/base62.js';
import { ExpiryHeap } from '../rate-limit/expiry-heap.js';
import { checkOptionNames } from '../validate/options.js';
import { CAPABILITIES, type Capabilities, type SynchronousLedger } from '../vocabulary/capabilities.js';
import type {
  CreditBalance,
  CreditEntry,
  CreditLedger,
  CreditReconciliation,
  EntriesOptions,
  HoldOptions,
  HoldResult,
  SettleResult,
  TopUpOptions,
} from '../vocabulary/credit-ledger.js';
import type { PruneArgs, PruneResult } from '../vocabulary/retention.js';
import { amountOverflow, amountOverHold } from './amount.js';
import {
  checkHoldArgs,
  checkSettleArgs,
  DEFAULT_HOLD_TTL_MS,
  validCreditAccount,
  validEntriesArgs,
  validHoldArgs,
  validHoldId,
  validSettleArgs,
  validTopUpArgs,
} from './arguments.js';
import { validHoldPruneArgs } from './prune.js';

/**
 * Options of {@link MemoryCreditLedger}.
 *
 * @example
 * const options: MemoryCreditLedgerOptions = { clock: () => Date.now() };
 */
export interface MemoryCreditLedgerOptions {
  /**
   * Current time in epoch milliseconds: when holds lapse, and each entry's `createdAt`.
   *
   * @default Date.now
   */
  clock?: () => number;
}

// An account's entries as parallel arrays of numbers (no object per entry, so a ledger that keeps every
// entry for good costs the garbage collector little); `CreditEntry` objects are made only when read. A
// top-up's amount is positive and a charge's negative (a settle of 0 writes none), so the sign is the kind;
// `tags` holds a charge's key id or a top-up's reference.
interface Account {
  available: number;
  held: number;
  /** The sum of every entry's amount. */
  total: number;
  readonly seqs: number[];
  readonly amounts: number[];
  readonly balances: number[];
  readonly times: number[];
  readonly tags: (string | undefined)[];
  readonly references: Set<string>;
}

interface Hold {
  readonly accountId: string;
  readonly amount: number;
  readonly keyId: string | undefined;
  /** Epoch milliseconds at which it lapses. */
  readonly lapsesAt: number;
}

// A hold id carries its account after this prefix and 16 characters (the ledger's 6 random ones and a
// 10-character count in base 36), so that a settle or a release of a hold already closed or lapsed still answers
// that account's balance. Ids are unique, not secret: drawing random bytes per call cost more than the
// rest of a hold and a settle together.
const HOLD_PREFIX = 'hold_';
// A literal (not `HOLD_PREFIX.length + 17`), so bundlers drop it from bundles without the ledger.
const HOLD_ACCOUNT_AT = 22;

/**
 * A credit ledger for one process: balances, open holds and entries live in this process's memory,
 * exact within it and gone when it exits (use `PostgresCreditLedger` or `RedisCreditLedger` to share
 * one ledger between processes and keep it). Every call runs to its end without yielding, so holds
 * never interleave. A hold neither settled nor released lapses `ttlMs` after it was taken: every call
 * first returns the credits of the holds that have lapsed, so no timer runs and none keeps a process
 * alive. A hold is forgotten when it closes (so `prune` has nothing to delete); entries are kept for
 * good, like a ledger's.
 *
 * @example
 * const ledger = new MemoryCreditLedger();
 * await ledger.topUp('acct_1', 100, { reference: 'pay_1' });
 * const held = await ledger.hold('acct_1', 3, { keyId: key.id });
 * if (held.ok) await ledger.settle(held.holdId); // { charged: 3, balance: 97 }
 */
export class MemoryCreditLedger implements CreditLedger {
  private readonly clock: () => number;
  private readonly accounts = new Map<string, Account>();
  private readonly holds = new Map<string, Hold>();
  // When each hold lapses; a closed hold's entry stays until it reaches the top (or the heap is rebuilt).
  private readonly lapses = new ExpiryHeap();
  private idStem: string | undefined;
  private idCount = 0;
  /**
   * Its `deadline` (every call is decided before it yields, so `authenticate` arms no timer for it) and
   * `synchronous` (`authenticate` and the adapters hold, settle and release without a promise).
   */
  declare readonly [CAPABILITIES]: Capabilities;

  constructor(options: MemoryCreditLedgerOptions = {}) {
    checkOptionNames(options, ['clock'], 'MemoryCreditLedger');
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new InvalidInputError('clock', 'clock must be a function returning epoch milliseconds', {
        reason: 'wrong_type',
      });
    }
    this.clock = options.clock ?? Date.now;
    // The synchronous twins check their arguments as the public methods do (anyone may call them
    // through `capabilityOf`: a negative amount must never add credits), without allocating.
    const synchronous: SynchronousLedger = {
      holdSync: (accountId, amount, o) => {
        const account = checkHoldArgs(accountId, amount, o);
        return this.now((now) => this.take(now, account, amount, o?.keyId, o?.ttlMs ?? DEFAULT_HOLD_TTL_MS));
      },
      settleSync: (holdId, amount) => {
        checkSettleArgs(holdId, amount);
        return this.now((now) => this.charge(now, holdId, amount));
      },
      releaseSync: (holdId) => {
        validHoldId(holdId);
        return this.now(() => this.give(holdId));
      },
    };
    this[CAPABILITIES] = { deadline: { timeoutMs: 1 }, synchronous };
  }

  /**
   * Adds `amount` to the account and writes a `top_up` entry; a `reference` the account already used
   * changes nothing. Resolves with the available balance.
   *
   * @example
   * await ledger.topUp('acct_1', 500, { reference: 'pi_1' }); // { balance: 500 }
   */
  topUp(accountId: string, amount: number, options?: TopUpOptions): Promise<CreditBalance> {
    return this.run((now) => {
      const args = validTopUpArgs(accountId, amount, options);
      const account = this.accountOf(args.accountId);
      if (args.reference !== undefined && account.references.has(args.reference)) {
        return { balance: account.available };
      }
      if (args.amount > Number.MAX_SAFE_INTEGER - (account.available + account.held)) {
        throw amountOverflow(args.amount);
      }
      account.available += args.amount;
      if (args.reference !== undefined) account.references.add(args.reference);
      this.write(now, account, args.amount, args.reference);
      return { balance: account.available };
    });
  }

  /**
   * The available balance: top-ups minus charges minus open holds; 0 for an unknown account.
   *
   * @example
   * await ledger.balance('acct_1'); // 497
   */
  balance(accountId: string): Promise<number> {
    return this.run(() => this.known(validCreditAccount(accountId))?.available ?? 0);
  }

  /**
   * Takes `amount` from the available balance, or nothing when it is short (`ok: false`). The hold
   * lapses after `ttlMs` (default 10 minutes) unless settled or released first.
   *
   * @example
   * await ledger.hold('acct_1', 3, { keyId: 'key_1', ttlMs: 30_000 }); // { ok: true, holdId: 'hold_…', balance: 494 }
   */
  hold(accountId: string, amount: number, options?: HoldOptions): Promise<HoldResult> {
    return this.run((now) => {
      const args = validHoldArgs(accountId, amount, options);
      return this.take(now, args.accountId, args.amount, args.keyId, args.ttlMs);
    });
  }

  /**
   * Charges `amount` of the hold (default all; 0..held) as one `charge` entry and returns the rest. A
   * hold already closed, lapsed or unknown charges 0.
   *
   * @example
   * await ledger.settle(holdId, 2); // { charged: 2, balance: 495 }
   */
  settle(holdId: string, amount?: number): Promise<SettleResult> {
    return this.run((now) => {
      const args = validSettleArgs(holdId, amount);
      return this.charge(now, args.holdId, args.amount);
    });
  }

  /**
   * Returns the whole hold to the balance, writing no entry. A hold already closed, lapsed or unknown
   * changes nothing.
   *
   * @example
   * await ledger.release(holdId); // { balance: 497 }
   */
  release(holdId: string): Promise<CreditBalance> {
    return this.run(() => this.give(validHoldId(holdId)));
  }

  /**
   * The account's entries, newest first: at most `limit` (default 100, at most 1,000).
   *
   * @example
   * await ledger.entries('acct_1', { limit: 10 }); // [{ kind: 'charge', amount: -3, balance: 497, ... }, ...]
   */
  entries(accountId: string, options?: EntriesOptions): Promise<CreditEntry[]> {
    return this.run(() => {
      const args = validEntriesArgs(accountId, options);
      const account = this.known(args.accountId);
      const newest: CreditEntry[] = [];
      if (!account) return newest;
      for (let i = account.amounts.length - 1; i >= 0 && newest.length < args.limit; i--) {
        newest.push(this.entryAt(args.accountId, account, i));
      }
      return newest;
    });
  }

  /**
   * Sums every entry of the account and compares it with the balance plus the open holds.
   *
   * @example
   * await ledger.reconcile('acct_1'); // { accountId: 'acct_1', entries: 500, balance: 497, held: 3, ok: true }
   */
  reconcile(accountId: string): Promise<CreditReconciliation> {
    return this.run(() => {
      const account = validCreditAccount(accountId);
      const known = this.known(account);
      const entries = known?.total ?? 0;
      const balance = known?.available ?? 0;
      const held = known?.held ?? 0;
      return { accountId: account, entries, balance, held, ok: entries === balance + held };
    });
  }

  /**
   * Answers `{ deleted: 0 }` once `olderThanMs` is checked (a non-negative number, else
   * `InvalidInputError` naming it): this ledger forgets a hold when it closes, so no closed hold is
   * left to prune. Entries are kept for good.
   *
   * @example
   * await ledger.prune({ olderThanMs: 86_400_000 }); // { deleted: 0 }
   */
  prune(options: PruneArgs): Promise<PruneResult> {
    return this.run(() => {
      validHoldPruneArgs(options);
      return { deleted: 0 };
    });
  }

  private take(now: number, accountId: string, amount: number, keyId: string | undefined, ttlMs: number): HoldResult {
    const account = this.known(accountId);
    if (!account || account.available < amount) return { ok: false, balance: account?.available ?? 0 };
    const holdId = `${HOLD_PREFIX}${this.nextId()}_${accountId}`;
    const lapsesAt = now + ttlMs;
    account.available -= amount;
    account.held += amount;
    this.holds.set(holdId, { accountId, amount, keyId, lapsesAt });
    this.lapses.push({ end: lapsesAt, key: holdId });
    return { ok: true, holdId, balance: account.available };
  }

  private charge(now: number, holdId: string, amount: number | undefined): SettleResult {
    const hold = this.holds.get(holdId);
    if (!hold) return { charged: 0, balance: this.balanceOfHold(holdId) };
    const charged = amount ?? hold.amount;
    if (charged > hold.amount) throw amountOverHold(charged, hold.amount);
    const account = this.close(holdId, hold);
    account.available += hold.amount - charged;
    if (charged > 0) this.write(now, account, -charged, hold.keyId);
    return { charged, balance: account.available };
  }

  private give(holdId: string): CreditBalance {
    const hold = this.holds.get(holdId);
    if (!hold) return { balance: this.balanceOfHold(holdId) };
    const account = this.close(holdId, hold);
    account.available += hold.amount;
    return { balance: account.available };
  }

  // Every call: the lapsed holds' credits back first, then the work; a throw becomes a rejection.
  private run<T>(work: (now: number) => T): Promise<T> {
    try {
      return Promise.resolve(this.now(work));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private now<T>(work: (now: number) => T): T {
    const now = this.clock();
    this.sweep(now);
    return work(now);
  }

  private sweep(now: number): void {
    for (let top = this.lapses.peek(); top && top.end <= now; top = this.lapses.peek()) {
      this.lapses.pop();
      const hold = this.holds.get(top.key);
      if (hold) this.close(top.key, hold).available += hold.amount;
    }
    // Closed holds leave their lapse behind; rebuild once those outnumber the open ones.
    if (this.lapses.size > 2 * this.holds.size + 1_024) {
      this.lapses.reset([...this.holds].map(([key, hold]) => ({ end: hold.lapsesAt, key })));
    }
  }

  private close(holdId: string, hold: Hold): Account {
    this.holds.delete(holdId);
    const account = this.accountOf(hold.accountId);
    account.held -= hold.amount;
    return account;
  }

  private balanceOfHold(holdId: string): number {
    if (!holdId.startsWith(HOLD_PREFIX) || holdId.length <= HOLD_ACCOUNT_AT) return 0;
    return this.known(holdId.slice(HOLD_ACCOUNT_AT))?.available ?? 0;
  }

  // 16 characters unique within this ledger (and, by the random part, among ledgers): 36^10 ids each.
  private nextId(): string {
    this.idStem ??= randomBase62(6);
    return this.idStem + (this.idCount++).toString(36).padStart(10, '0');
  }

  private write(now: number, account: Account, amount: number, tag: string | undefined): void {
    this.idStem ??= randomBase62(6);
    account.seqs.push(this.idCount++);
    account.amounts.push(amount);
    account.balances.push(account.available);
    account.times.push(now);
    account.tags.push(tag);
    account.total += amount;
  }

  private entryAt(accountId: string, account: Account, i: number): CreditEntry {
    const amount = account.amounts[i] as number;
    const entry: CreditEntry = {
      id: `ce_${this.idStem}${(account.seqs[i] as number).toString(36).padStart(10, '0')}`,
      accountId,
      kind: amount > 0 ? 'top_up' : 'charge',
      amount,
      balance: account.balances[i] as number,
      createdAt: new Date(account.times[i] as number).toISOString(),
    };
    const tag = account.tags[i];
    if (tag !== undefined) entry[amount > 0 ? 'reference' : 'keyId'] = tag;
    return entry;
  }

  private known(accountId: string): Account | undefined {
    return this.accounts.get(accountId);
  }

  private accountOf(accountId: string): Account {
    let account = this.accounts.get(accountId);
    if (!account) {
      account = {
        available: 0,
        held: 0,
        total: 0,
        seqs: [],
        amounts: [],
        balances: [],
        times: [],
        tags: [],
        references: new Set(),
      };
      this.accounts.set(accountId, account);
    }
    return account;
  }
}
