import type { PruneArgs, PruneResult } from './retention.js';
// The credit ledger's interface (docs/guide/credits.md, "What it promises"): what every backend implements and
// what `authenticate`'s `credits` option and the CLI call.

/**
 * One line of an account's ledger: a `top_up` (positive `amount`) or a `charge` (negative `amount`,
 * written when a hold is settled). `balance` is the account's available balance just after it.
 *
 * @example
 * { id: 'ce_…', accountId: 'acct_1', kind: 'charge', amount: -3, balance: 97, keyId: 'key_…', createdAt: '2026-11-24T18:00:00.000Z' }
 */
export interface CreditEntry {
  id: string;
  accountId: string;
  kind: 'top_up' | 'charge';
  /** Positive for a `top_up`, negative for a `charge`, in credits (or a currency's minor unit). */
  amount: number;
  /** The available balance just after this entry. */
  balance: number;
  /** The key the charge's hold was taken for, when the hold named one. */
  keyId?: string;
  /** The top-up's reference (a payment id, say), when it had one. */
  reference?: string;
  /** When it was written, an ISO 8601 string. */
  createdAt: string;
}

/**
 * Options of {@link CreditLedger.topUp}.
 *
 * @example
 * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' });
 */
export interface TopUpOptions {
  /** Makes the top-up idempotent per account: a reference already used for that account credits nothing. */
  reference?: string;
}

/**
 * Options of {@link CreditLedger.hold}.
 *
 * @example
 * await ledger.hold('acct_1', 3, { keyId: key.id, ttlMs: 30_000 });
 */
export interface HoldOptions {
  /** The key the hold is taken for; its charge entry carries it. */
  keyId?: string;
  /** How long the hold lives unless settled or released, in milliseconds; then it lapses and its credits return. Default 10 minutes. */
  ttlMs?: number;
}

/**
 * Options of {@link CreditLedger.entries}.
 *
 * @example
 * await ledger.entries('acct_1', { limit: 20 });
 */
export interface EntriesOptions {
  /** The most entries to return (newest first). Default 100, at most 1,000. */
  limit?: number;
}

/**
 * What {@link CreditLedger.hold} answers: the hold and the available balance after it, or `ok: false`
 * and the balance when the account cannot cover the amount (nothing was held).
 *
 * @example
 * const held = await ledger.hold('acct_1', 3);
 * if (!held.ok) return insufficientCredits(held.balance);
 */
export type HoldResult = { ok: true; holdId: string; balance: number } | { ok: false; balance: number };

/**
 * What {@link CreditLedger.settle} answers: the credits charged (0 when the hold was already settled,
 * released, lapsed or unknown) and the available balance after it.
 *
 * @example
 * const { charged, balance } = await ledger.settle(holdId);
 */
export interface SettleResult {
  charged: number;
  balance: number;
}

/**
 * An account's available balance after a call (`topUp`, `release`).
 *
 * @example
 * const { balance } = await ledger.release(holdId);
 */
export interface CreditBalance {
  balance: number;
}

/**
 * What {@link CreditLedger.reconcile} answers: the sum of every entry of the account, its available
 * balance and its open (unexpired) holds, read together, and whether they agree. They always should
 * (`entries === balance + held`); `ok: false` means the ledger's data was changed outside it.
 *
 * @example
 * const r = await ledger.reconcile('acct_1'); // { accountId: 'acct_1', entries: 100, balance: 95, held: 5, ok: true }
 * if (!r.ok) alert(`ledger of ${r.accountId} is off by ${r.entries - r.balance - r.held} credits`);
 */
export interface CreditReconciliation {
  accountId: string;
  /** The sum of all the account's entry amounts (top-ups minus charges), every entry, not one page. */
  entries: number;
  /** The available balance, as {@link CreditLedger.balance} answers it. */
  balance: number;
  /** The credits of the account's open holds that have not lapsed. */
  held: number;
  /** Whether `entries === balance + held`. */
  ok: boolean;
}

/**
 * A prepaid credit balance per account, exact enough to bill from. Amounts are non-negative safe
 * integers (anything else is an `InvalidInputError` naming `amount`, and nothing is written). A hold
 * takes credits atomically or not at all; `settle` turns it into one `charge` entry and returns the
 * rest; `release` returns it all and writes no entry; a hold neither settled nor released within its
 * `ttlMs` lapses and its credits return by themselves. The sum of an account's entries always equals
 * its balance plus its open holds (`reconcile` checks it). Implementations: `MemoryCreditLedger` (keygate),
 * `PostgresCreditLedger` (keygate/postgres), `RedisCreditLedger` (keygate/redis); each passes
 * `describeCreditLedgerContract` from `keygate/testing`.
 *
 * @example
 * const held = await ledger.hold(accountId, 1, { keyId });
 * if (held.ok) { const res = await handle(); await (res.status < 500 ? ledger.settle(held.holdId) : ledger.release(held.holdId)); }
 */
export interface CreditLedger {
  /** Adds `amount` (> 0) and writes a `top_up` entry; with a `reference` already used for the account, changes nothing. */
  topUp(accountId: string, amount: number, options?: TopUpOptions): Promise<CreditBalance>;
  /** The available balance: top-ups minus charges minus open holds; 0 for an unknown account. */
  balance(accountId: string): Promise<number>;
  /** Takes `amount` (> 0) from the available balance atomically, or nothing (`ok: false`). */
  hold(accountId: string, amount: number, options?: HoldOptions): Promise<HoldResult>;
  /** Charges `amount` (0..held, default all) of the hold as one `charge` entry and returns the rest; idempotent. */
  settle(holdId: string, amount?: number): Promise<SettleResult>;
  /** Returns the whole hold, writing no entry; idempotent. */
  release(holdId: string): Promise<CreditBalance>;
  /** The account's entries, newest first. */
  entries(accountId: string, options?: EntriesOptions): Promise<CreditEntry[]>;
  /**
   * Sums all of the account's entries and reads its balance and open holds at one moment (one
   * transaction, one script), and says whether the sum equals the balance plus the held credits. It
   * reads every entry of the account, so it costs as much as the account has entries: a tool's call
   * (`keygate credits reconcile`), not a request's. An unknown account reconciles with zeros.
   */
  reconcile(accountId: string): Promise<CreditReconciliation>;
  /**
   * Deletes the records of holds closed (settled, released or lapsed) more than `olderThanMs` ago,
   * in batches, and answers how many; an open hold expired that long ago lapses first (its credits
   * back), then goes too. Never an open hold, never an entry (the
   * financial record `reconcile` sums): balances, entries and `reconcile` are as before, and a settle
   * or release of a pruned hold's id changes nothing, as for an unknown id. A ledger that keeps no
   * record of a closed hold (memory, Redis) answers `{ deleted: 0 }`. Every keygate ledger has it;
   * optional so that a ledger written before it still is a `CreditLedger`. `olderThanMs` that is not
   * a non-negative number is an `InvalidInputError` naming it.
   */
  prune?(options: PruneArgs): Promise<PruneResult>;
}

/**
 * What a request that holds credits carries on its successful `authenticate` result (`result.credits`):
 * the hold to settle or release once the handler has answered, what it cost, and the account's
 * available balance just after the hold.
 *
 * @example
 * const result = await authenticate(request, store, { credits: { ledger } });
 * if (result.ok && result.credits) await ledger.settle(result.credits.holdId); // the work was done
 */
export interface HeldCredits {
  /** The hold's id, for `ledger.settle` or `ledger.release`. */
  readonly holdId: string;
  /** Credits held for this request (what a settle charges). */
  readonly cost: number;
  /** The account's available balance just after the hold. */
  readonly balance: number;
}
