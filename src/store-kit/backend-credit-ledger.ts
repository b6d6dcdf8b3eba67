import {
  DEFAULT_LEDGER_TIMEOUT_MS,
  type HoldArgs,
  type TopUpArgs,
  validCreditAccount,
  validEntriesArgs,
  validHoldArgs,
  validHoldId,
  validSettleArgs,
  validTopUpArgs,
} from '../credits/arguments.js';
import { withLedgerDeadline } from '../credits/deadline.js';
import { PRUNE_HOLDS_BATCH, PruneSchedule, validHoldPruneArgs, validPruneHoldsAfterMs } from '../credits/prune.js';
import { checkOptionNames } from '../validate/options.js';
import { validTimeoutMs } from '../validate/timeout.js';
import { CAPABILITIES, type Capabilities, type Capable } from '../vocabulary/capabilities.js';
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

/**
 * What every shared credit ledger does the same way, whatever keeps the accounts: it checks each
 * call's arguments (`InvalidInputError`, nothing sent), bounds each call by `timeoutMs`
 * (`CreditLedgerUnavailableError`, with the backend's error as `cause`, when the backend fails or
 * does not answer in time; a `KeygateError` a hook throws on purpose passes through), and declares
 * its `deadline` capability. A subclass keeps the accounts: one protected hook per call, each given
 * arguments already checked. A call that timed out may still complete in the backend: a hold taken
 * that way lapses after its `ttlMs`. A settle or release of a hold whose earlier settle or release
 * timed out while the backend had not answered it yet is not sent again: it waits (under its own
 * deadline) for that call's answer and answers with it, so a caller that retries learns what the
 * first attempt did instead of an idempotent `charged: 0` (a release joined by a settle answers
 * `charged: 0`; if that earlier call fails, the retry is sent after all). For authors of ledgers over
 * other backends.
 *
 * @example
 * class MyCreditLedger extends BackendCreditLedger {
 *   constructor(options: { client: MyClient; timeoutMs?: number }) {
 *     super('MyCreditLedger', options.timeoutMs, { options, names: ['client', 'timeoutMs'] });
 *   }
 *   protected applyTopUp(args: TopUpArgs) { ... } // and the six other hooks
 * }
 */
export abstract class BackendCreditLedger implements CreditLedger, Capable {
  /** Its `deadline`: each call settles within `timeoutMs`. */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds a call may take before it rejects. */
  readonly timeoutMs: number;
  // The class name errors carry: not `constructor.name`, which a minifier may rename.
  protected readonly ledgerName: string;
  // Settles and releases whose caller's deadline passed while the backend had not answered, by hold id,
  // until the backend answers or fails: a settle or release of the same hold joins the call.
  private readonly unanswered = new Map<string, Promise<SettleResult | CreditBalance>>();

  /**
   * @param name The subclass's name, as its errors carry it (`'RedisCreditLedger'`).
   * @param timeoutMs The `timeoutMs` option as given, checked here (`validTimeoutMs`); absent,
   * `DEFAULT_LEDGER_TIMEOUT_MS` (1,000).
   * @param given The subclass's options as given and every member it takes: a member `names` does not
   * list is refused first (`InvalidInputError`, reason `unknown_option`; see `checkOptionNames`), so
   * the subclass builds nothing for options it would ignore.
   */
  protected constructor(name: string, timeoutMs: unknown, given?: { options: unknown; names: readonly string[] }) {
    if (given) checkOptionNames(given.options, given.names, name);
    this.ledgerName = name;
    this.timeoutMs = validTimeoutMs(timeoutMs, DEFAULT_LEDGER_TIMEOUT_MS);
    this[CAPABILITIES] = { deadline: this };
  }

  /**
   * Adds `amount` credits (a positive safe integer) to the account and writes a `top_up` entry. A
   * `reference` already used for the account changes nothing and answers the balance. A top-up that
   * would take the account's credits (available and held) past `Number.MAX_SAFE_INTEGER` is an
   * `InvalidInputError` naming `amount`, and nothing is written.
   *
   * @example
   * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' }); // { balance: 500 }, and again: { balance: 500 }
   */
  async topUp(accountId: string, amount: number, options?: TopUpOptions): Promise<CreditBalance> {
    const args = validTopUpArgs(accountId, amount, options);
    return this.call(() => this.applyTopUp(args));
  }

  /**
   * The account's available balance: top-ups minus charges minus open holds; 0 for an unknown account.
   *
   * @example
   * await ledger.balance('acct_1'); // 497
   */
  async balance(accountId: string): Promise<number> {
    const account = validCreditAccount(accountId);
    return this.call(() => this.readBalance(account));
  }

  /**
   * Takes `amount` credits (a positive safe integer) from the available balance for `ttlMs` (default
   * 600,000 ms), or nothing when the balance does not cover it (`ok: false`). Unless settled or
   * released, the hold lapses after `ttlMs` and its credits come back.
   *
   * @example
   * const held = await ledger.hold('acct_1', 3, { keyId: key.id, ttlMs: 30_000 }); // { ok: true, holdId, balance: 497 }
   */
  async hold(accountId: string, amount: number, options?: HoldOptions): Promise<HoldResult> {
    const args = validHoldArgs(accountId, amount, options);
    return this.call(() => this.placeHold(args));
  }

  /**
   * Charges `amount` of the hold (0..held, default all) as one `charge` entry (none for 0) and returns
   * the rest; more than the open hold is an `InvalidInputError` naming `amount`, and nothing changes.
   * A hold already settled, released or lapsed, or an unknown id (balance 0), changes nothing:
   * `charged` is 0.
   *
   * A settle retried after one that timed out and is still unanswered in the backend waits for that
   * one's answer (see the class).
   *
   * @example
   * await ledger.settle(held.holdId);    // { charged: 3, balance: 497 }
   * await ledger.settle(held.holdId);    // { charged: 0, balance: 497 }
   */
  async settle(holdId: string, amount?: number): Promise<SettleResult> {
    const args = validSettleArgs(holdId, amount);
    return this.closeHold(
      args.holdId,
      () => this.settleHold(args.holdId, args.amount),
      (earlier) => ('charged' in earlier ? earlier : { charged: 0, balance: earlier.balance }),
    );
  }

  /**
   * Returns the whole hold to the balance, writing no entry. A hold already settled, released or
   * lapsed, or an unknown id (balance 0), changes nothing. A release retried after a settle or
   * release of the hold that timed out and is still unanswered waits for that one's answer.
   *
   * @example
   * await ledger.release(held.holdId); // { balance: 500 }
   */
  async release(holdId: string): Promise<CreditBalance> {
    const id = validHoldId(holdId);
    return this.closeHold(
      id,
      () => this.releaseHold(id),
      (earlier) => ({ balance: earlier.balance }),
    );
  }

  /**
   * The account's entries, newest first, at most `limit` of them (default 100, at most 1,000).
   *
   * @example
   * await ledger.entries('acct_1', { limit: 2 }); // [{ kind: 'charge', amount: -3, balance: 497, ... }, { kind: 'top_up', ... }]
   */
  async entries(accountId: string, options?: EntriesOptions): Promise<CreditEntry[]> {
    const args = validEntriesArgs(accountId, options);
    return this.call(() => this.readEntries(args.accountId, args.limit));
  }

  /**
   * Sums every entry of the account and reads its balance and open holds at one moment: `ok` when
   * the entries add up to the balance plus the held credits.
   *
   * @example
   * await ledger.reconcile('acct_1'); // { accountId: 'acct_1', entries: 500, balance: 497, held: 3, ok: true }
   */
  async reconcile(accountId: string): Promise<CreditReconciliation> {
    const account = validCreditAccount(accountId);
    return this.call(() => this.readFigures(account));
  }

  /**
   * Deletes the records of holds closed (settled, released or lapsed) more than `olderThanMs` ago,
   * and answers how many (an open hold expired that long ago lapses first, its credits back). It runs
   * batches of 1,000 (each one hook call under `timeoutMs`) until one deletes fewer. Never an open hold nor an entry: balances,
   * entries and `reconcile` are unchanged, and a settle or release of a pruned hold id changes nothing,
   * as for an unknown id. `olderThanMs` must be a non-negative number (`InvalidInputError` naming it).
   *
   * @example
   * await ledger.prune({ olderThanMs: 86_400_000 }); // { deleted: 1204 }, and again: { deleted: 0 }
   */
  async prune(options: PruneArgs): Promise<PruneResult> {
    const { olderThanMs } = validHoldPruneArgs(options);
    let deleted = 0;
    for (;;) {
      const batch = await this.call(() => this.pruneHolds(olderThanMs, PRUNE_HOLDS_BATCH));
      deleted += batch;
      if (batch < PRUNE_HOLDS_BATCH) return { deleted };
    }
  }

  /**
   * `prune` in the backend, one batch: deletes at most `limit` closed holds whose close is older than
   * `olderThanMs` by the backend's clock (returning first, as a call on their account would, the
   * credits of open holds that expired that long ago, so that they lapse and go too), and answers how
   * many it deleted. The default deletes nothing: for a backend that keeps no record of a closed hold.
   *
   * @example
   * protected pruneHolds(olderThanMs: number, limit: number) { return this.backend.deleteClosedHolds(olderThanMs, limit); }
   */
  protected pruneHolds(_olderThanMs: number, _limit: number): number | Promise<number> {
    return 0;
  }

  /**
   * Checks a subclass's `pruneHoldsAfterMs` option (absent: one day; `null` or `0`: off; else a whole
   * number of milliseconds, or `InvalidInputError` naming it) and, unless off, makes
   * {@link BackendCreditLedger.pruneSoon} prune holds closed longer ago than that. Answers the value
   * checked, for the subclass to show. Call it once, from the constructor.
   *
   * @example
   * this.pruneHoldsAfterMs = this.pruneHoldsAfter(options.pruneHoldsAfterMs); // 86400000
   */
  protected pruneHoldsAfter(value: unknown): number | null {
    const afterMs = validPruneHoldsAfterMs(value);
    this.holdPruning =
      afterMs === null ? undefined : new PruneSchedule(afterMs, () => this.prune({ olderThanMs: afterMs }));
    return afterMs;
  }

  /**
   * Starts a prune in the background when one is due (see {@link BackendCreditLedger.pruneHoldsAfter}):
   * at most one at a time, at most once an hour (or per `pruneHoldsAfterMs`, if shorter), the first at
   * the first call. A subclass calls it after each hold it took, so a ledger that bills prunes what
   * billing adds; the hold does not wait for it, and a prune that fails is tried again an interval later.
   *
   * @example
   * const held = await this.backend.hold(args); this.pruneSoon(); return held;
   */
  protected pruneSoon(): void {
    this.holdPruning?.due();
  }

  // The background prune `pruneHoldsAfter` set up; undefined when off.
  private holdPruning: PruneSchedule | undefined;

  /**
   * `topUp` in the backend, atomically per account.
   *
   * @example
   * protected async applyTopUp(args: TopUpArgs) { return { balance: await this.backend.credit(args) }; }
   */
  protected abstract applyTopUp(args: TopUpArgs): CreditBalance | Promise<CreditBalance>;

  /**
   * `balance` in the backend (expired holds counted as returned).
   *
   * @example
   * protected readBalance(account: string) { return this.backend.available(account); }
   */
  protected abstract readBalance(account: string): number | Promise<number>;

  /**
   * `hold` in the backend: the hold and its id, or `ok: false` with the balance.
   *
   * @example
   * protected placeHold(args: HoldArgs) { return this.backend.hold(args); }
   */
  protected abstract placeHold(args: HoldArgs): HoldResult | Promise<HoldResult>;

  /**
   * `settle` in the backend; `amount` undefined charges the whole hold.
   *
   * @example
   * protected settleHold(holdId: string, amount: number | undefined) { return this.backend.settle(holdId, amount); }
   */
  protected abstract settleHold(holdId: string, amount: number | undefined): SettleResult | Promise<SettleResult>;

  /**
   * `release` in the backend.
   *
   * @example
   * protected releaseHold(holdId: string) { return this.backend.release(holdId); }
   */
  protected abstract releaseHold(holdId: string): CreditBalance | Promise<CreditBalance>;

  /**
   * `entries` in the backend, newest first (see {@link BackendCreditLedger.entry}).
   *
   * @example
   * protected readEntries(account: string, limit: number) { return this.backend.entries(account, limit).map((e) => this.entry(e)); }
   */
  protected abstract readEntries(account: string, limit: number): CreditEntry[] | Promise<CreditEntry[]>;

  /**
   * `reconcile` in the backend, its figures of one moment.
   *
   * @example
   * protected readFigures(account: string) { return this.backend.reconcile(account); }
   */
  protected abstract readFigures(account: string): CreditReconciliation | Promise<CreditReconciliation>;

  /**
   * Runs one hook under the deadline (`withLedgerDeadline` with this ledger's name and `timeoutMs`). A
   * subclass whose driver reports failures in its own way overrides it to translate them first.
   *
   * @example
   * protected override call<T>(work: () => T | Promise<T>) { return super.call(() => translated(work)); }
   */
  protected call<T>(work: () => T | Promise<T>): Promise<T> {
    return withLedgerDeadline(this.ledgerName, this.timeoutMs, async () => work());
  }

  /**
   * A settle or release of `holdId` (`send` runs its hook) under the deadline, or, when an earlier one
   * of the hold is still unanswered past its caller's deadline, that one's answer as `joined` reads it
   * (and `send` after all if it fails). A call that times out unanswered is kept for the next one.
   */
  private closeHold<T extends SettleResult | CreditBalance>(
    holdId: string,
    send: () => T | Promise<T>,
    joined: (earlier: SettleResult | CreditBalance) => T,
  ): Promise<T> {
    const earlier = this.unanswered.get(holdId);
    if (earlier) return this.call(() => earlier.then(joined, () => send()));
    let pending: Promise<T> | undefined;
    let answered = false;
    const heard = () => {
      answered = true;
    };
    const answer = this.call(() => {
      pending = Promise.resolve().then(send);
      pending.then(heard, heard);
      return pending;
    });
    answer.catch(() => {
      if (answered || pending === undefined) return;
      const unanswered = pending;
      this.unanswered.set(holdId, unanswered);
      const forget = () => void (this.unanswered.get(holdId) === unanswered && this.unanswered.delete(holdId));
      unanswered.then(forget, forget);
    });
    return answer;
  }

  /**
   * The `CreditEntry` of an entry as a backend stores it (numbers possibly as decimal text, absent
   * fields as `null` or `undefined`, the time already ISO 8601): numbers read, `keyId` and
   * `reference` only when present.
   *
   * @example
   * this.entry({ id: 'ce_7', accountId: 'acct_1', kind: 'top_up', amount: '500', balance: '500', keyId: null, reference: 'pi_1', createdAt }); // { ..., amount: 500, reference: 'pi_1' }
   */
  protected entry(
    stored: Omit<CreditEntry, 'amount' | 'balance' | 'keyId' | 'reference'> & {
      amount: string | number;
      balance: string | number;
      keyId?: string | null | undefined;
      reference?: string | null | undefined;
    },
  ): CreditEntry {
    const entry: CreditEntry = {
      id: stored.id,
      accountId: stored.accountId,
      kind: stored.kind,
      amount: Number(stored.amount),
      balance: Number(stored.balance),
      createdAt: stored.createdAt,
    };
    if (stored.keyId !== null && stored.keyId !== undefined) entry.keyId = stored.keyId;
    if (stored.reference !== null && stored.reference !== undefined) entry.reference = stored.reference;
    return entry;
  }
}
