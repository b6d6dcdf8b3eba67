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
} from 'keygate';
import {
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
import { validNamespace } from './namespace.js';
import { callObject } from './protocol.js';
import type { DurableObjectIdLike, DurableObjectNamespaceLike } from './workers-types.js';

/**
 * Options of {@link DurableObjectCreditLedger}.
 *
 * @example
 * const options: DurableObjectCreditLedgerOptions = { namespace: env.KEYGATE_CREDITS, timeoutMs: 1_000 };
 */
export interface DurableObjectCreditLedgerOptions {
  /** The binding of the `KeygateCreditObject` class (`env.KEYGATE_CREDITS`). */
  namespace: DurableObjectNamespaceLike;
  /**
   * Milliseconds a call waits for its object before it rejects with `CreditLedgerUnavailableError`
   * (503 through `authenticate`); declared as the ledger's `deadline`.
   *
   * @default 1000
   */
  timeoutMs?: number;
}

// A hold id: the object's inner id, then the 64 hex digits of the account's object, so that settle and
// release reach the object that holds it without knowing the account.
const HOLD_ID = /^(hold_[0-9a-f]{32})_([0-9a-f]{64})$/;

/**
 * A credit ledger on Durable Objects, exact everywhere: each account is kept by one
 * `KeygateCreditObject` (`namespace.idFromName(accountId)`), which applies one call at a time in one
 * SQLite transaction, so no interleaving of holds, settles and top-ups overdraws an account or loses
 * a credit. One round trip to the account's object per call; a hold's id names its object, so settle
 * and release go straight to it. Arguments are checked here (`InvalidInputError`, nothing sent); an
 * object that fails, throws or does not answer within `timeoutMs` makes the call reject with
 * `CreditLedgerUnavailableError`: fail closed (503 through `authenticate`).
 *
 * @example
 * const ledger = new DurableObjectCreditLedger({ namespace: env.KEYGATE_CREDITS });
 * const result = await authenticate(request, store, { credits: { ledger, cost: 1 } });
 */
export class DurableObjectCreditLedger implements CreditLedger, Capable {
  /** Its `deadline`: each call settles within `timeoutMs`. */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds a call waits for its object. */
  readonly timeoutMs: number;
  private readonly namespace: DurableObjectNamespaceLike;

  constructor(options: DurableObjectCreditLedgerOptions) {
    this.namespace = validNamespace(options?.namespace);
    this.timeoutMs = validTimeoutMs(options.timeoutMs, DEFAULT_LEDGER_TIMEOUT_MS);
    this[CAPABILITIES] = { deadline: this };
  }

  /**
   * Adds `amount` credits to the account in its object and writes a `top_up` entry; a `reference`
   * already used for the account changes nothing.
   *
   * @example
   * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' }); // { balance: 500 }
   */
  async topUp(accountId: string, amount: number, options?: TopUpOptions): Promise<CreditBalance> {
    const args = validTopUpArgs(accountId, amount, options);
    const reference = args.reference === undefined ? {} : { reference: args.reference };
    return this.onAccount(args.accountId, 'topUp', [args.accountId, args.amount, reference]);
  }

  /**
   * The account's available balance; 0 for an unknown account.
   *
   * @example
   * await ledger.balance('acct_1'); // 497
   */
  async balance(accountId: string): Promise<number> {
    const account = validCreditAccount(accountId);
    return this.onAccount(account, 'balance', [account]);
  }

  /**
   * Takes `amount` credits from the account for `ttlMs` (default 10 minutes), or nothing (`ok: false`).
   *
   * @example
   * const held = await ledger.hold('acct_1', 3, { keyId: key.id }); // { ok: true, holdId, balance: 497 }
   */
  async hold(accountId: string, amount: number, options?: HoldOptions): Promise<HoldResult> {
    const args = validHoldArgs(accountId, amount, options);
    const holdOptions = { ttlMs: args.ttlMs, ...(args.keyId === undefined ? {} : { keyId: args.keyId }) };
    return this.call(async () => {
      const id = this.namespace.idFromName(args.accountId);
      const held = await callObject<HoldResult>(this.namespace, id, 'hold', [args.accountId, args.amount, holdOptions]);
      return held.ok ? { ...held, holdId: `${held.holdId}_${id.toString()}` } : held;
    });
  }

  /**
   * Charges `amount` of the hold (default all) as one `charge` entry and returns the rest; a closed or
   * unknown hold changes nothing (`charged: 0`).
   *
   * @example
   * await ledger.settle(held.holdId); // { charged: 3, balance: 497 }
   */
  async settle(holdId: string, amount?: number): Promise<SettleResult> {
    const args = validSettleArgs(holdId, amount);
    const hold = this.objectOf(args.holdId);
    if (!hold) return { charged: 0, balance: 0 };
    return this.call(() =>
      callObject<SettleResult>(this.namespace, hold.id, 'settle', [hold.innerId, args.amount ?? null]),
    );
  }

  /**
   * Returns the whole hold to the balance, writing no entry; a closed or unknown hold changes nothing.
   *
   * @example
   * await ledger.release(held.holdId); // { balance: 500 }
   */
  async release(holdId: string): Promise<CreditBalance> {
    const hold = this.objectOf(validHoldId(holdId));
    if (!hold) return { balance: 0 };
    return this.call(() => callObject<CreditBalance>(this.namespace, hold.id, 'release', [hold.innerId]));
  }

  /**
   * The account's entries, newest first, at most `limit` (default 100).
   *
   * @example
   * await ledger.entries('acct_1', { limit: 20 });
   */
  async entries(accountId: string, options?: EntriesOptions): Promise<CreditEntry[]> {
    const args = validEntriesArgs(accountId, options);
    return this.onAccount(args.accountId, 'entries', [args.accountId, { limit: args.limit }]);
  }

  /**
   * Sums the account's entries and reads its balance and open holds in one transaction of its object.
   *
   * @example
   * await ledger.reconcile('acct_1'); // { accountId: 'acct_1', entries: 500, balance: 497, held: 3, ok: true }
   */
  async reconcile(accountId: string): Promise<CreditReconciliation> {
    const account = validCreditAccount(accountId);
    return this.onAccount(account, 'reconcile', [account]);
  }

  /** The object of a hold id this ledger made, or undefined for any other id (an unknown hold). */
  private objectOf(holdId: string): { innerId: string; id: DurableObjectIdLike } | undefined {
    const match = HOLD_ID.exec(holdId);
    if (!match) return undefined;
    const [, innerId = '', hexId = ''] = match;
    try {
      return { innerId, id: this.namespace.idFromString(hexId) };
    } catch {
      // 64 hex digits that no object of this namespace has (the namespace checks its ids): unknown.
      return undefined;
    }
  }

  private onAccount<T>(accountId: string, method: string, args: readonly unknown[]): Promise<T> {
    return this.call(() => callObject<T>(this.namespace, this.namespace.idFromName(accountId), method, args));
  }

  private call<T>(work: () => Promise<T>): Promise<T> {
    return withLedgerDeadline('DurableObjectCreditLedger', this.timeoutMs, work);
  }
}
