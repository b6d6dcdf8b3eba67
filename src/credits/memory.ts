import { InvalidInputError } from '#errors';
import { CAPABILITIES, type Capabilities } from '../capabilities.js';
import { encodeBase62, randomBase62 } from '../key/base62.js';
import { ExpiryHeap } from '../rate-limit/expiry-heap.js';
import { amountOverflow, amountOverHold } from './amount.js';
import {
  validCreditAccount,
  validEntriesArgs,
  validHoldArgs,
  validHoldId,
  validSettleArgs,
  validTopUpArgs,
} from './arguments.js';
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
} from './types.js';

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

interface Account {
  available: number;
  held: number;
  readonly entries: CreditEntry[];
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
// 10-character count), so that a settle or a release of a hold already closed or lapsed still answers
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
 * alive. Entries are kept for good, like a ledger's.
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
  /** Its `deadline`: every call is decided before it yields, so `authenticate` arms no timer for it. */
  declare readonly [CAPABILITIES]: Capabilities;

  constructor(options: MemoryCreditLedgerOptions = {}) {
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new InvalidInputError('clock', 'clock must be a function returning epoch milliseconds', {
        reason: 'wrong_type',
      });
    }
    this.clock = options.clock ?? Date.now;
    this[CAPABILITIES] = { deadline: { timeoutMs: 1 } };
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
      this.write(now, account, args.accountId, 'top_up', args.amount, { reference: args.reference });
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
      const account = this.known(args.accountId);
      if (!account || account.available < args.amount) return { ok: false, balance: account?.available ?? 0 };
      const holdId = `${HOLD_PREFIX}${this.nextId()}_${args.accountId}`;
      const lapsesAt = now + args.ttlMs;
      account.available -= args.amount;
      account.held += args.amount;
      this.holds.set(holdId, { accountId: args.accountId, amount: args.amount, keyId: args.keyId, lapsesAt });
      this.lapses.push({ end: lapsesAt, key: holdId });
      return { ok: true, holdId, balance: account.available };
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
      const hold = this.holds.get(args.holdId);
      if (!hold) return { charged: 0, balance: this.balanceOfHold(args.holdId) };
      const charged = args.amount ?? hold.amount;
      if (charged > hold.amount) throw amountOverHold(charged, hold.amount);
      const account = this.close(args.holdId, hold);
      account.available += hold.amount - charged;
      if (charged > 0) this.write(now, account, hold.accountId, 'charge', -charged, { keyId: hold.keyId });
      return { charged, balance: account.available };
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
    return this.run(() => {
      const id = validHoldId(holdId);
      const hold = this.holds.get(id);
      if (!hold) return { balance: this.balanceOfHold(id) };
      const account = this.close(id, hold);
      account.available += hold.amount;
      return { balance: account.available };
    });
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
      const entries = this.known(args.accountId)?.entries ?? [];
      const newest: CreditEntry[] = [];
      for (let i = entries.length - 1; i >= 0 && newest.length < args.limit; i--) {
        newest.push({ ...(entries[i] as CreditEntry) });
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
      const entries = (known?.entries ?? []).reduce((sum, entry) => sum + entry.amount, 0);
      const balance = known?.available ?? 0;
      const held = known?.held ?? 0;
      return { accountId: account, entries, balance, held, ok: entries === balance + held };
    });
  }

  // Every call: the lapsed holds' credits back first, then the work; a throw becomes a rejection.
  private run<T>(work: (now: number) => T): Promise<T> {
    try {
      const now = this.clock();
      this.sweep(now);
      return Promise.resolve(work(now));
    } catch (err) {
      return Promise.reject(err);
    }
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

  // 16 characters unique within this ledger (and, by the random part, among ledgers): 62^10 ids each.
  private nextId(): string {
    this.idStem ??= randomBase62(6);
    return this.idStem + encodeBase62(this.idCount++, 10);
  }

  private write(
    now: number,
    account: Account,
    accountId: string,
    kind: CreditEntry['kind'],
    amount: number,
    extra: { keyId?: string | undefined; reference?: string | undefined },
  ): void {
    const entry: CreditEntry = {
      id: `ce_${this.nextId()}`,
      accountId,
      kind,
      amount,
      balance: account.available,
      createdAt: new Date(now).toISOString(),
    };
    if (extra.keyId !== undefined) entry.keyId = extra.keyId;
    if (extra.reference !== undefined) entry.reference = extra.reference;
    account.entries.push(entry);
  }

  private known(accountId: string): Account | undefined {
    return this.accounts.get(accountId);
  }

  private accountOf(accountId: string): Account {
    let account = this.accounts.get(accountId);
    if (!account) {
      account = { available: 0, held: 0, entries: [], references: new Set() };
      this.accounts.set(accountId, account);
    }
    return account;
  }
}
