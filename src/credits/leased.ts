import { InvalidInputError } from '#errors';
import { randomBase62 } from '../key/base62.js';
import { LEASE_OPTIONS, LeaseEngine, type LeaseOptions } from '../leases/engine.js';
import { refillPoint } from '../leases/refill-point.js';
import { beginTake, type LeaseSlice, SliceStore } from '../leases/slice-store.js';
import { checkOptionNames } from '../validate/options.js';
import { validWholeNumber } from '../validate/whole.js';
import type {
  CreditBalance,
  CreditEntry,
  CreditLedger,
  CreditReconciliation,
  EntriesOptions,
  HoldOptions,
  HoldResult,
  PruneHoldsOptions,
  PruneHoldsResult,
  SettleResult,
  TopUpOptions,
} from '../vocabulary/credit-ledger.js';
import { amountOverHold } from './amount.js';
import { checkHoldArgs, validHoldArgs, validSettleArgs } from './arguments.js';
import { withLedgerDeadline } from './deadline.js';
import { validPruneArgs } from './prune.js';

/**
 * Options of {@link LeasedCreditLedger}.
 *
 * @example
 * const options: CreditLeaseOptions = { ledger: new RedisCreditLedger({ client }), maxSlice: 1000, sliceTtlMs: 120_000 };
 */
export interface CreditLeaseOptions extends LeaseOptions {
  /** The shared ledger the slices are held from (any `CreditLedger`). */
  ledger: CreditLedger;
  /**
   * The most credits one process holds free for an account and key, its slice and the next one
   * together (beyond what the request that takes it costs). A funded account costs one hold and one
   * settle per slice instead of per request: about 0.003 round trips a request at the default, whose
   * slices (near 666 credits once the first is spent) leave a busy key (tens of thousands of requests a
   * second in one process) enough credits to outlast a round trip to a loaded store. A ledger's call
   * costs its store more than a limiter's take (a transaction that writes an entry), hence a larger
   * default than `LeasedRateLimiter`'s. It also bounds the early refusal near the end of a balance and
   * what a crash leaves unbilled (see the class): at most `maxSlice - 1` credits, and never more than
   * half a `sliceTtlMs` of the key's traffic.
   *
   * @default 1000
   */
  maxSlice?: number;
  /**
   * The ttl of each slice's hold in the shared ledger, in milliseconds: a process that dies loses
   * nobody's credits for longer. A slice takes new requests for half of it, is settled after, and a
   * request's hold taken from it lives at least a quarter of it; a hold asking for a longer `ttlMs`
   * goes to the shared ledger on its own.
   *
   * @default 120_000
   */
  sliceTtlMs?: number;
}

interface Slice extends LeaseSlice {
  readonly accountId: string;
  readonly keyId: string | undefined;
  holdId: string;
  /** Credits of the slice no request holds. */
  free: number;
  /** Credits of settled requests: what the slice's settle charges. */
  spent: number;
  /** Requests' holds not yet settled or released. */
  open: number;
  /** Local epoch ms after which the slice takes no new request. */
  usableUntil: number;
  /** Local epoch ms by which every request's hold on it has lapsed (a quarter ttl before its own does). */
  holdsUntil: number;
  retired: boolean;
  /** The next slice, taken in the background (`refilling` while on its way): requests move to it once this one cannot cover them. */
  next?: Slice;
}

// Whether a slice takes a hold of `amount` now: not retired, not past its time, enough credits free.
const covers = (slice: Slice, amount: number, now: number) =>
  !slice.retired && now < slice.usableUntil && slice.free >= amount;

type LocalHold = { readonly slice: Slice; readonly amount: number; readonly expiresAt: number };
type HoldArgs = ReturnType<typeof validHoldArgs>;

const PREFIX = 'lease_';

/**
 * A credit ledger that holds slices of an account's balance from a shared ledger (one `hold` each),
 * answers requests' holds, settles and releases from them in this process, and settles each slice
 * with what its requests spent. No account is ever overdrawn across any number of processes: every
 * credit a request holds was held in the shared ledger first.
 *
 * Entries: a slice belongs to one account and one key, and settles as one `charge` entry carrying
 * that key: the sum of its requests' settled amounts. So charges stay attributed per key, and
 * `reconcile()` stays ok (a slice is an ordinary hold), but an entry covers many requests (up to
 * `maxSlice` credits, or those of half a `sliceTtlMs`) instead of one each.
 *
 * A slice takes new requests for half its `sliceTtlMs`, or until it runs out; then it is settled
 * once its requests have closed. A request's hold lapses (its credits return to the slice, not
 * charged) a quarter ttl before the slice would. A process that dies leaves its slices to lapse in
 * the shared ledger after `sliceTtlMs`: their credits return, and what its requests spent since the
 * slice's last settle is never charged (under-billing by at most one slice per account and key,
 * never over-billing). Call `close()` on a clean shutdown to settle every slice.
 *
 * Near the end of a balance, credits held in other processes' slices may refuse a request early:
 * at most `(processes - 1) * (maxSlice - 1)` credits per key of the account in use elsewhere.
 * `balance` in a hold's answer is this process's view (the shared balance after its latest slice,
 * plus its own free credits), so `credits.low` may fire late or more than once per crossing.
 *
 * @example
 * const ledger = new LeasedCreditLedger({ ledger: new RedisCreditLedger({ client }) });
 * const auth = { credits: { ledger } };
 * process.on('SIGTERM', async () => { await server.close(); await ledger.close(); });
 */
export class LeasedCreditLedger extends LeaseEngine<CreditLedger> implements CreditLedger {
  readonly sliceTtlMs: number;
  /** Credits spent by requests whose slice lapsed before it could be settled (never charged). */
  uncharged = 0;
  /** Each account and key's live slice (`${accountId}\n${keyId}`). */
  private readonly slices = new SliceStore<Slice>();
  private readonly holds = new Map<string, LocalHold>();
  /** Slices retired and not yet settled in the shared ledger. */
  private readonly retired = new Set<Slice>();
  private readonly settling = new Set<Slice>();
  /** The shared balance of each account as last answered. */
  private readonly known = new Map<string, number>();
  /** Credits of each account free in live slices (what `free()` answers, kept as slices change). */
  private readonly freeBy = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private serial = 0;
  private readonly tag = randomBase62(6);

  constructor(options: CreditLeaseOptions) {
    checkOptionNames(options, [...LEASE_OPTIONS, 'ledger', 'sliceTtlMs'], 'LeasedCreditLedger');
    const ledger = options?.ledger;
    if (typeof ledger?.hold !== 'function' || typeof ledger.settle !== 'function') {
      throw new InvalidInputError('ledger', 'ledger must be a CreditLedger');
    }
    super(options, ledger, [1000, 2000, 2000], 'immediateCredits');
    this.sliceTtlMs = validWholeNumber('sliceTtlMs', options.sliceTtlMs ?? 120_000, 1_000);
  }

  /** The shared ledger the slices are held from. */
  get ledger(): CreditLedger {
    return this.inner;
  }

  /** Credits this process holds for `accountId` that no request holds (in every key's slice). */
  free(accountId: string): number {
    return this.freeBy.get(accountId) ?? 0;
  }

  /** The shared ledger's `topUp`. */
  topUp(accountId: string, amount: number, options?: TopUpOptions): Promise<CreditBalance> {
    return this.inner.topUp(accountId, amount, options);
  }

  /**
   * The shared ledger's available balance plus the credits this process holds free in its slices.
   *
   * @example
   * await ledger.balance('acct_1'); // 480
   */
  async balance(accountId: string): Promise<number> {
    const shared = await this.inner.balance(accountId);
    return shared + this.free(accountId);
  }

  /**
   * Holds `amount` for a request from this process's slice for the account and key, taking a new
   * slice from the shared ledger when it cannot cover it. A `ttlMs` above a quarter of `sliceTtlMs`
   * holds from the shared ledger directly.
   *
   * @example
   * const held = await ledger.hold('acct_1', 1, { keyId: 'key_1' });
   */
  hold(accountId: string, amount: number, options?: HoldOptions): Promise<HoldResult> {
    let args: HoldArgs;
    try {
      args = validHoldArgs(accountId, amount, options);
    } catch (err) {
      return Promise.reject(err);
    }
    if (options?.ttlMs !== undefined && args.ttlMs > this.sliceTtlMs / 4)
      return this.inner.hold(accountId, amount, options);
    // A hold its slice covers answers at once; only one that goes to the shared ledger (or waits for
    // another request's slice) runs under the deadline, so the common case arms no timer.
    const now = this.holdChecked(args.accountId, args.amount, options);
    if (now) return Promise.resolve(now);
    const at = `${args.accountId}\n${args.keyId ?? ''}`;
    return withLedgerDeadline('LeasedCreditLedger', this.timeoutMs, () => this.holdSlowly(at, args, options));
  }

  /**
   * `hold` answered at once from this process's slice for the account and key, or `undefined` when
   * only the shared ledger can answer (no slice, too few credits, a `ttlMs` above a quarter of
   * `sliceTtlMs`). Takes the next slice in the background once the slice runs low. Declared, with
   * `settleNow` and `releaseNow`, as the `immediateCredits` capability: `authenticate` and the
   * adapters ask it first, so a funded request costs no promise. Its arguments are checked as
   * `hold` checks them (a negative, fractional or NaN amount throws `InvalidInputError`, nothing held),
   * without allocating.
   *
   * @example
   * const held = ledger.holdNow('acct_1', 1, { keyId: 'key_1' }) ?? (await ledger.hold('acct_1', 1, { keyId: 'key_1' }));
   */
  holdNow(accountId: string, amount: number, options?: HoldOptions): HoldResult | undefined {
    return this.holdChecked(checkHoldArgs(accountId, amount, options), amount, options);
  }

  // `holdNow` once its arguments are checked (`hold` checked them already).
  private holdChecked(accountId: string, amount: number, options: HoldOptions | undefined): HoldResult | undefined {
    const ttlMs = options?.ttlMs ?? Number.POSITIVE_INFINITY;
    if (ttlMs !== Number.POSITIVE_INFINITY && ttlMs > this.sliceTtlMs / 4) return undefined;
    this.start();
    const at = `${accountId}\n${options?.keyId ?? ''}`;
    const now = this.clock();
    const slice = this.usable(at, this.slices.get(at), amount, now);
    if (slice === undefined) return undefined;
    const held = this.holdFrom(slice, amount, now, ttlMs);
    if (slice.free <= slice.refillAt && slice.refilling === undefined && slice.next === undefined && this.prefetch) {
      this.refill(at, slice);
    }
    return held;
  }

  /**
   * The slice a hold of `amount` takes from now without waiting: `slice` when it covers it, else its
   * ready successor (then `slice` retires), else undefined.
   */
  private usable(at: string, slice: Slice | undefined, amount: number, now: number): Slice | undefined {
    if (slice === undefined || slice.taking) return undefined;
    if (covers(slice, amount, now)) return slice;
    const next = slice.next;
    if (next === undefined || !covers(next, amount, now)) return undefined;
    slice.next = undefined;
    this.retire(slice);
    this.slices.set(at, next);
    if (slice.open === 0) void this.settleSlice(slice);
    return next;
  }

  /**
   * Takes the slice after `slice` in the background, sized so that what this process holds free for
   * the account and key stays under `maxSlice` (the early-refusal bound stands).
   */
  private refill(at: string, slice: Slice): void {
    slice.refillAt = -1;
    const size = Math.min(this.maxSlice - 1 - slice.free, this.sizeFor(this.known.get(slice.accountId), 0));
    if (size < 1) return;
    const { accountId, keyId } = slice;
    const options = keyId === undefined ? { ttlMs: this.sliceTtlMs } : { keyId, ttlMs: this.sliceTtlMs };
    const sentAt = this.clock();
    const freeAtSend = slice.free;
    const landed = (held: HoldResult) => {
      this.known.set(accountId, held.balance);
      if (!held.ok) return;
      const next = this.slice(accountId, keyId, held.holdId, sentAt);
      if (slice.retired || this.slices.get(at) !== slice) {
        // Its slice was retired meanwhile (closed, or past its time): the new one is settled unused.
        next.retired = true;
        this.retired.add(next);
        return void this.settleSlice(next);
      }
      this.credit(next, size);
      // What went while the successor was on its way sets how early the successor takes the next.
      next.refillAt = refillPoint(size, Math.max(0, freeAtSend - slice.free));
      slice.next = next;
    };
    // Too late (past timeoutMs, which bounds the requests that wait for it): its credits go back.
    const late = (held: HoldResult) => void (held.ok && this.inner.release(held.holdId).catch(() => {}));
    this.refillIn(slice, () => this.inner.hold(accountId, size, options), landed, late);
  }

  /** A new live slice of `holdId` in the shared ledger, taken at `sentAt`, with nothing free yet. */
  private slice(accountId: string, keyId: string | undefined, holdId: string, sentAt: number): Slice {
    return {
      accountId,
      keyId,
      holdId,
      free: 0,
      spent: 0,
      open: 0,
      usableUntil: sentAt + this.sliceTtlMs / 2,
      holdsUntil: sentAt + (this.sliceTtlMs * 3) / 4,
      retired: false,
      refillAt: -1,
    };
  }

  /** Adds `delta` to a slice's free credits, and to its account's while the slice is live. */
  private credit(slice: Slice, delta: number): void {
    slice.free += delta;
    if (slice.retired || delta === 0) return;
    const total = (this.freeBy.get(slice.accountId) ?? 0) + delta;
    if (total === 0) this.freeBy.delete(slice.accountId);
    else this.freeBy.set(slice.accountId, total);
  }

  private async holdSlowly(at: string, args: HoldArgs, options: HoldOptions | undefined): Promise<HoldResult> {
    const ttlMs = options?.ttlMs === undefined ? Number.POSITIVE_INFINITY : args.ttlMs;
    for (;;) {
      const slice = this.slices.get(at);
      const now = this.clock();
      const ready = this.usable(at, slice, args.amount, now);
      if (ready) return this.holdFrom(ready, args.amount, now, ttlMs);
      // A take in flight, or the next slice on its way: wait for it rather than take another.
      const pending = slice?.taking ?? slice?.refilling;
      if (pending) {
        await pending;
        continue;
      }
      if (slice) {
        // Neither the slice nor a successor covers the request: it retires (with its successor).
        this.retire(slice);
        if (slice.open === 0) {
          await this.settleSlice(slice);
          // Another request may have taken the next slice meanwhile: use it rather than take a second.
          continue;
        }
      }
      return this.take(at, args.accountId, args.keyId, args.amount, ttlMs);
    }
  }

  /**
   * Settles a request's hold: counts `amount` (default all) as spent from its slice, returns the rest
   * to the slice. The charge entry is written when the slice settles. Idempotent; an unknown or
   * lapsed hold charges 0.
   *
   * @example
   * await ledger.settle(held.holdId); // { charged: 1, balance: 479 }
   */
  async settle(holdId: string, amount?: number): Promise<SettleResult> {
    const args = validSettleArgs(holdId, amount);
    const local = this.holds.get(args.holdId);
    if (!local) {
      // One of this process's holds, already closed or lapsed: it charges nothing.
      if (args.holdId.startsWith(PREFIX)) return { charged: 0, balance: 0 };
      return this.inner.settle(holdId, amount);
    }
    const charged = args.amount ?? local.amount;
    if (charged > local.amount) throw amountOverHold(charged, local.amount);
    return { charged, balance: this.close1(args.holdId, local, charged) };
  }

  /**
   * `settle` of a whole hold taken from a slice, answered at once (nothing is written: the slice's
   * settle charges it), or `undefined` for a hold the shared ledger answers. Of `immediateCredits`.
   *
   * @example
   * ledger.settleNow(held.holdId) ?? (await ledger.settle(held.holdId));
   */
  settleNow(holdId: string): SettleResult | undefined {
    const local = this.holds.get(holdId);
    return local && { charged: local.amount, balance: this.close1(holdId, local, local.amount) };
  }

  /**
   * `release` of a hold taken from a slice, answered at once, or `undefined` for a hold the shared
   * ledger answers. Of `immediateCredits`.
   *
   * @example
   * ledger.releaseNow(held.holdId) ?? (await ledger.release(held.holdId));
   */
  releaseNow(holdId: string): CreditBalance | undefined {
    const local = this.holds.get(holdId);
    return local && { balance: this.close1(holdId, local, 0) };
  }

  /**
   * Releases a request's hold back to its slice; writes nothing. Idempotent.
   *
   * @example
   * await ledger.release(held.holdId); // { balance: 480 }
   */
  async release(holdId: string): Promise<CreditBalance> {
    const args = validSettleArgs(holdId);
    const released = this.releaseNow(args.holdId);
    if (released) return released;
    if (args.holdId.startsWith(PREFIX)) return { balance: 0 };
    return this.inner.release(holdId);
  }

  /** The shared ledger's `entries`: a slice's charge is there once the slice has settled. */
  entries(accountId: string, options?: EntriesOptions): Promise<CreditEntry[]> {
    return this.inner.entries(accountId, options);
  }

  /** The shared ledger's `reconcile`: slices are ordinary holds there, so it stays ok. */
  reconcile(accountId: string): Promise<CreditReconciliation> {
    return this.inner.reconcile(accountId);
  }

  /**
   * The shared ledger's `prune` (`{ deleted: 0 }` for a shared ledger without one), once `olderThanMs`
   * is checked: slices are its holds, and this process keeps no closed hold of its own.
   *
   * @example
   * await ledger.prune({ olderThanMs: 86_400_000 }); // { deleted: 37 }
   */
  async prune(options: PruneHoldsOptions): Promise<PruneHoldsResult> {
    validPruneArgs(options);
    return this.inner.prune ? this.inner.prune(options) : { deleted: 0 };
  }

  /**
   * Stops taking slices and settles every slice once its requests have closed (or their holds have
   * lapsed): call it on a clean shutdown, after the server stopped. Never rejects; a slice whose
   * settle fails lapses in the shared ledger (its spent credits are then not charged).
   *
   * @example
   * await server.close(); await ledger.close();
   */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    // A background take lands (or times out) first, so that its slice is settled with the rest;
    // close() waits for it at most timeoutMs, on a timer of its own.
    await this.refilled();
    for (const slice of this.slices.values()) this.retire(slice);
    this.slices.clear();
    for (let round = 0; this.retired.size > 0 || this.settling.size > 0; round++) {
      await this.sweep(true);
      if (this.retired.size > 0 || this.settling.size > 0) await new Promise((r) => setTimeout(r, 20));
      if (round > 10_000) break;
    }
  }

  private holdFrom(slice: Slice, amount: number, now: number, ttlMs: number): HoldResult {
    this.credit(slice, -amount);
    slice.open++;
    const holdId = `${PREFIX}${this.tag}${(++this.serial).toString(36)}`;
    this.holds.set(holdId, { slice, amount, expiresAt: Math.min(now + ttlMs, slice.holdsUntil) });
    return { ok: true, holdId, balance: this.view(slice.accountId) };
  }

  private async take(at: string, accountId: string, keyId: string | undefined, amount: number, ttlMs: number) {
    // Nothing usable until the hold lands: `taking` makes requests wait for it.
    const placeholder = { ...this.slice(accountId, keyId, '', 0), usableUntil: 0, holdsUntil: 0 };
    const finish = beginTake(placeholder);
    this.slices.place(at, placeholder);
    try {
      const sentAt = this.clock();
      const options = keyId === undefined ? { ttlMs: this.sliceTtlMs } : { keyId, ttlMs: this.sliceTtlMs };
      let size = this.sizeFor(this.known.get(accountId), amount);
      let held = await this.inner.hold(accountId, size, options);
      // Smaller slices while the balance covers the cost: each try is smaller than the last, so this
      // refuses only once the shared balance itself fell below the cost (the early-refusal bound).
      while (!held.ok && size > amount && held.balance >= amount) {
        size = Math.min(size - 1, this.sizeFor(held.balance, amount));
        held = await this.inner.hold(accountId, size, options);
      }
      this.known.set(accountId, held.balance);
      if (!held.ok) {
        this.slices.delete(at);
        return { ok: false, balance: held.balance + this.free(accountId) } satisfies HoldResult;
      }
      Object.assign(placeholder, this.slice(accountId, keyId, held.holdId, sentAt));
      this.credit(placeholder, size);
      placeholder.refillAt = refillPoint(size - amount, 0);
      return this.holdFrom(placeholder, amount, this.clock(), ttlMs);
    } catch (err) {
      this.slices.delete(at);
      throw err;
    } finally {
      finish();
    }
  }

  /** A slice's size: the cost, or more up to `maxSlice` and a `divisor`-th of the balance last seen. */
  private sizeFor(balance: number | undefined, amount: number): number {
    const share = balance === undefined ? this.maxSlice : Math.floor(balance / this.divisor);
    return Math.max(amount, Math.min(this.maxSlice, share));
  }

  /** The account's balance as this process sees it: the shared one last answered and its own free credits. */
  private view(accountId: string): number {
    return (this.known.get(accountId) ?? 0) + this.free(accountId);
  }

  /** Closes a request's hold, `charged` of it spent; answers the account's balance as this process sees it. */
  private close1(holdId: string, local: LocalHold, charged: number): number {
    this.holds.delete(holdId);
    const slice = local.slice;
    slice.spent += charged;
    this.credit(slice, local.amount - charged);
    slice.open--;
    if (slice.retired && slice.open === 0) void this.settleSlice(slice);
    return this.view(slice.accountId);
  }

  /** Takes no more requests on `slice` (nor on its successor, if one is waiting): it settles once they closed. */
  private retire(slice: Slice): void {
    if (slice.retired) return;
    const free = this.freeBy.get(slice.accountId) ?? 0;
    if (free === slice.free) this.freeBy.delete(slice.accountId);
    else this.freeBy.set(slice.accountId, free - slice.free);
    slice.retired = true;
    this.retired.add(slice);
    const at = `${slice.accountId}\n${slice.keyId ?? ''}`;
    if (this.slices.get(at) === slice) this.slices.delete(at);
    const next = slice.next;
    slice.next = undefined;
    if (next) this.retire(next);
  }

  /** Settles a retired slice with no open request: one `charge` entry of what its requests spent. */
  private async settleSlice(slice: Slice): Promise<void> {
    if (!this.retired.has(slice) || this.settling.has(slice)) return;
    this.retired.delete(slice);
    this.settling.add(slice);
    try {
      const result = await this.inner.settle(slice.holdId, slice.spent);
      this.known.set(slice.accountId, result.balance);
      if (result.charged < slice.spent) this.uncharged += slice.spent - result.charged;
      this.settling.delete(slice);
    } catch {
      // Tried again by the next sweep, until the slice's hold lapses in the shared ledger.
      this.settling.delete(slice);
      if (this.clock() < slice.holdsUntil + this.sliceTtlMs / 4) this.retired.add(slice);
      else this.uncharged += slice.spent;
    }
  }

  /** Retires old slices, lapses requests' holds past their time, settles what can be settled. */
  private async sweep(closing = false): Promise<void> {
    const now = this.clock();
    for (const [at, slice] of this.slices) {
      if (now < slice.usableUntil || slice.taking) continue;
      // A successor waiting takes the slice's place; a successor past its own time retires with it.
      const next = slice.next;
      slice.next = undefined;
      this.retire(slice);
      if (next && now < next.usableUntil) this.slices.set(at, next);
      else if (next) this.retire(next);
    }
    for (const [id, local] of this.holds) if (now >= local.expiresAt) this.close1(id, local, 0);
    const ready = [...this.retired].filter((s) => s.open === 0 || (closing && now >= s.holdsUntil));
    await Promise.all(ready.map((s) => this.settleSlice(s)));
  }

  private start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.sweep(), Math.max(250, this.sliceTtlMs / 8));
    (this.timer as { unref?: () => void }).unref?.();
  }
}
