import type { CreditBalance, CreditEntry, CreditReconciliation, HoldResult, SettleResult } from 'keygate';
import { BackendCreditLedger, type HoldArgs, type TopUpArgs } from 'keygate/store-kit';
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

// Every member of {@link DurableObjectCreditLedgerOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ namespace: true, timeoutMs: true } satisfies Record<
  keyof DurableObjectCreditLedgerOptions,
  true
>);

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
 * `CreditLedgerUnavailableError`: fail closed (503 through `authenticate`). Each object deletes its
 * own closed holds (`KeygateCreditObject`'s `pruneHoldsAfterMs`, a day): objects are reached by
 * account only, so `prune()` reaches none and answers `{ deleted: 0 }`.
 *
 * @example
 * const ledger = new DurableObjectCreditLedger({ namespace: env.KEYGATE_CREDITS });
 * const result = await authenticate(request, store, { credits: { ledger, cost: 1 } });
 */
export class DurableObjectCreditLedger extends BackendCreditLedger {
  private readonly namespace: DurableObjectNamespaceLike;

  constructor(options: DurableObjectCreditLedgerOptions) {
    const namespace = validNamespace(options?.namespace);
    super('DurableObjectCreditLedger', options.timeoutMs, { options, names: OPTION_NAMES });
    this.namespace = namespace;
  }

  protected applyTopUp(args: TopUpArgs): Promise<CreditBalance> {
    const reference = args.reference === undefined ? {} : { reference: args.reference };
    return this.onAccount(args.accountId, 'topUp', args.amount, reference);
  }

  protected readBalance(account: string): Promise<number> {
    return this.onAccount(account, 'balance');
  }

  // The hold's id names its object, so that settle and release go straight to it.
  protected async placeHold(args: HoldArgs): Promise<HoldResult> {
    const holdOptions = { ttlMs: args.ttlMs, ...(args.keyId === undefined ? {} : { keyId: args.keyId }) };
    const id = this.namespace.idFromName(args.accountId);
    const held = await callObject<HoldResult>(this.namespace, id, 'hold', [args.accountId, args.amount, holdOptions]);
    return held.ok ? { ...held, holdId: `${held.holdId}_${id.toString()}` } : held;
  }

  protected async settleHold(holdId: string, amount: number | undefined): Promise<SettleResult> {
    const hold = this.objectOf(holdId);
    if (!hold) return { charged: 0, balance: 0 };
    return callObject<SettleResult>(this.namespace, hold.id, 'settle', [hold.innerId, amount ?? null]);
  }

  protected async releaseHold(holdId: string): Promise<CreditBalance> {
    const hold = this.objectOf(holdId);
    if (!hold) return { balance: 0 };
    return callObject<CreditBalance>(this.namespace, hold.id, 'release', [hold.innerId]);
  }

  protected readEntries(account: string, limit: number): Promise<CreditEntry[]> {
    return this.onAccount(account, 'entries', { limit });
  }

  // One transaction of the account's object.
  protected readFigures(account: string): Promise<CreditReconciliation> {
    return this.onAccount(account, 'reconcile');
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

  /** One call of the account's object: the account id, then `rest`. */
  private onAccount<T>(accountId: string, method: string, ...rest: unknown[]): Promise<T> {
    return callObject<T>(this.namespace, this.namespace.idFromName(accountId), method, [accountId, ...rest]);
  }
}
