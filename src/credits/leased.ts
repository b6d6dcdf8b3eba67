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
  SettleResult,
  TopUpOptions,
} from '../vocabulary/credit-ledger.js';
import type { PruneArgs, PruneResult } from '../vocabulary/retention.js';
import { amountOverHold } from './amount.js';
import { checkHoldArgs, validHoldArgs, validSettleArgs } from './arguments.js';
import { withLedgerDeadline } from './deadline.js';
import { validHoldPruneArgs } from './prune.js';
import { sliceOutcome } from './slice-outcome.js';

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
   * The most credits of an account and key that this process's slices may hold unconfirmed: the
   * sizes of its live slice, of the next one and of a take on its way, and what requests spent (or
   * hold) from retired slices whose settle the shared ledger has not confirmed yet. That is what a
   * crash (a SIGKILL, in an outage too) can leave unbilled per account and key: at most `maxSlice`
   * credits, or one request's cost when that is larger. So that the next slice fits beside the live
   * one, a slice is at most half of it (`floor(maxSlice / 2)`; all of it with `prefetch: false`): a
   * funded account costs one hold and one settle per half `maxSlice`, about 0.004 round trips a
   * request at the default (slices of 500). A busy key (tens of thousands of requests a second in one
   * process) still finds its next slice in place after a round trip to a loaded store. A ledger's
   * call costs its store more than a limiter's take (a transaction that writes an entry), hence a
   * larger default than `LeasedRateLimiter`'s. It also bounds the early refusal near the end of a
   * balance (see the class): at most `maxSlice - 1` credits free per process and key.
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

/**
 * What this process's slices of one account and key hold unconfirmed, so that a crash leaves at most
 * `maxSlice` credits unbilled (or one request's cost when larger).
 */
interface Owner {
  /** `${accountId}\n${keyId}`. */
  readonly at: string;
  /**
   * The sum of `exposed` over its slices not yet confirmed (live, next, retired, settling) and the
   * sizes of takes on their way: what a crash now could leave unbilled, at most.
   */
  exposure: number;
  /** Slices and takes counted in `exposure` (the owner is forgotten at 0). */
  members: number;
  /** The live slice whose next slice had no room when it was due: taken once a settle makes room. */
  deferred: Slice | undefined;
  /** The latest settle on its way of one of its slices: a request with no room waits for it. */
  settling: Promise<void> | undefined;
}

interface Slice extends LeaseSlice {
  readonly accountId: string;
  readonly keyId: string | undefined;
  readonly owner: Owner;
  holdId: string;
  /**
   * Its part of the owner's exposure: its size while live; once retired, what its requests spent or
   * still hold (its free credits can no longer be spent); 0 once its settle was answered, or once its
   * hold has closed for sure.
   */
  exposed: number;
  /** Whether it still counts in its owner's `members`. */
  counted: boolean;
  /** Process-clock epoch ms before which its hold cannot have lapsed in the shared ledger. */
  lapsesFrom: number;
  /** Process-clock epoch ms by which its hold is closed for sure (settled or lapsed). */
  closedBy: number;
  /** A settle attempt sent while the hold could be open failed or timed out: it may have been applied. */
  doubt: boolean;
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
 * `reconcile()` stays ok (a slice is an ordinary hold), but an entry covers many requests (up to half
 * `maxSlice` credits, or those of half a `sliceTtlMs`) instead of one each.
 *
 * A slice takes new requests for half its `sliceTtlMs`, or until it runs out; then it is settled
 * once its requests have closed. A request's hold lapses (its credits return to the slice, not
 * charged) a quarter ttl before the slice would. A process that dies leaves its slices to lapse in
 * the shared ledger after `sliceTtlMs`: their credits return, and what its requests spent since the
 * slice was taken is never charged, never over-billing. What it can leave unbilled is bounded per
 * account and key, in every state, store outages included: the slices of an owner (account and key)
 * whose settle the shared ledger has not confirmed hold at most `maxSlice` credits together (or one
 * request's cost when that is larger), so a crash leaves at most that unbilled, beside what
 * `uncharged` and `unresolved` already counted. A slice's size is at most the room left under that
 * bound and at most half `maxSlice`, so in steady state slices are `floor(maxSlice / 2)` credits (500
 * at the default): one hold and one settle per half `maxSlice` credits, twice the round trips a
 * request of slices of `maxSlice` would cost (about 0.004 a request at the default, against 0.003).
 * With `prefetch: false` a slice is up to `maxSlice`. A next slice with no room yet (the previous
 * slice's settle has not landed) is taken once a settle makes room; a request that no slice can cover
 * and that has no room waits for its owner's settle on its way, else holds from the shared ledger on
 * its own (with the store down, both fail like the ledger: `CreditLedgerUnavailableError`, a 503),
 * so no request is served beyond the bound. A slice whose settle failed is tried again while its hold
 * may still be open, and stops counting once its hold has closed for sure. Call `close()` on a clean
 * shutdown to settle every slice.
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
  /**
   * Credits spent by requests whose slice's hold lapsed before any settle of it reached the shared
   * ledger: never charged (the ledger answered so, or no attempt could have reached the hold while it
   * was open). Credits the ledger charged are never counted here.
   */
  uncharged = 0;
  /**
   * Credits spent by requests whose slice's settle outcome is unknown: an attempt failed or timed out
   * while the hold was open (it may have been applied), and no answer came before the hold could have
   * lapsed (a later one answers `charged: 0` either way). Each is either charged or not: compare
   * `entries()` with your request log to tell. Never counted in `uncharged`.
   */
  unresolved = 0;
  /** Each account and key's live slice (`${accountId}\n${keyId}`). */
  private readonly slices = new SliceStore<Slice>();
  /** Each account and key's unconfirmed slices' exposure, while it has any slice. */
  private readonly owners = new Map<string, Owner>();
  /** The largest slice: half `maxSlice` (so that the next fits beside it), all of it without prefetch. */
  private readonly sliceMax: number;
  /** How far the shared ledger's lapse of a slice may sit from where this process's clock puts it, in ms. */
  private readonly lapseMarginMs: number;
  private readonly holds = new Map<string, LocalHold>();
  /** Slices retired and not yet settled in the shared ledger. */
  private readonly retired = new Set<Slice>();
  private readonly settling = new Set<Slice>();
  /** The settles on their way (each under the shared ledger's deadline): `idle()` waits for them. */
  private readonly settles = new Set<Promise<void>>();
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
    this.sliceMax = this.prefetch ? Math.max(1, Math.floor(this.maxSlice / 2)) : this.maxSlice;
    this.lapseMarginMs = Math.ceil(this.sliceTtlMs / 10);
  }

  /** The shared ledger the slices are held from. */
  get ledger(): CreditLedger {
    return this.inner;
  }

  /** Credits this process holds for `accountId` that no request holds (in every key's slice). */
  free(accountId: string): number {
    return this.freeBy.get(accountId) ?? 0;
  }

  /**
   * Resolves once no next slice and no slice settle of this process is on its way (a settle that
   * lands may take a next slice that was waiting for room), so that `free` counts every credit the
   * shared ledger holds for its live slices. Never rejects; each call is under its deadline.
   *
   * @example
   * await ledger.idle();
   * ledger.free('acct_1'); // 742
   */
  override async idle(): Promise<void> {
    for (;;) {
      await super.idle();
      if (this.settles.size === 0) return;
      await Promise.all(this.settles);
    }
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
   * Takes the slice after `slice` in the background, sized so that the owner's exposure stays within
   * `maxSlice` (and so what this process holds free for the account and key stays under it: the
   * early-refusal bound stands). With too little room for at least half the slice it wants, it waits:
   * the next settle of the owner's slices that lands takes it.
   */
  private refill(at: string, slice: Slice): void {
    slice.refillAt = -1;
    const owner = slice.owner;
    const want = Math.min(this.sliceMax, this.share(this.known.get(slice.accountId)));
    if (want < 1) return;
    const size = Math.min(want, this.maxSlice - owner.exposure);
    if (size < 1 || 2 * size < want) {
      owner.deferred = slice;
      return;
    }
    owner.deferred = undefined;
    const { accountId, keyId } = slice;
    const options = keyId === undefined ? { ttlMs: this.sliceTtlMs } : { keyId, ttlMs: this.sliceTtlMs };
    const sentAt = this.clock();
    const freeAtSend = slice.free;
    // Counted from now: once it lands it can be spent. Handed to the new slice, or given back.
    owner.exposure += size;
    owner.members++;
    let handed = false;
    const landed = (held: HoldResult) => {
      this.known.set(accountId, held.balance);
      if (!held.ok) return;
      handed = true;
      const next = this.slice(owner, accountId, keyId, held.holdId, sentAt);
      next.exposed = size;
      this.credit(next, size);
      if (slice.retired || this.slices.get(at) !== slice) {
        // Its slice was retired meanwhile (closed, or past its time): the new one is settled unused.
        this.retire(next);
        return void this.settleSlice(next);
      }
      // What went while the successor was on its way sets how early the successor takes the next.
      next.refillAt = refillPoint(size, Math.max(0, freeAtSend - slice.free));
      slice.next = next;
    };
    // Too late (past timeoutMs, which bounds the requests that wait for it): its credits go back.
    const late = (held: HoldResult) => void (held.ok && this.inner.release(held.holdId).catch(() => {}));
    const given = () => {
      if (handed) return undefined;
      owner.exposure -= size;
      this.leaveOwner(owner);
      return undefined;
    };
    this.refillIn(slice, () => this.inner.hold(accountId, size, options), landed, late, given);
  }

  /** A new live slice of `holdId` in the shared ledger, sent at `sentAt` and answered now, with nothing free yet. */
  private slice(owner: Owner, accountId: string, keyId: string | undefined, holdId: string, sentAt: number): Slice {
    return {
      accountId,
      keyId,
      owner,
      holdId,
      exposed: 0,
      counted: true,
      lapsesFrom: sentAt + this.sliceTtlMs - this.lapseMarginMs,
      closedBy: this.clock() + this.sliceTtlMs + this.lapseMarginMs,
      doubt: false,
      free: 0,
      spent: 0,
      open: 0,
      usableUntil: sentAt + this.sliceTtlMs / 2,
      holdsUntil: sentAt + (this.sliceTtlMs * 3) / 4,
      retired: false,
      refillAt: -1,
    };
  }

  /** The owner of `at`'s slices, made when it has none. */
  private ownerOf(at: string): Owner {
    let owner = this.owners.get(at);
    if (owner === undefined) {
      owner = { at, exposure: 0, members: 0, deferred: undefined, settling: undefined };
      this.owners.set(at, owner);
    }
    return owner;
  }

  /** Forgets an owner none of whose slices or takes counts any more. */
  private leaveOwner(owner: Owner): void {
    owner.members--;
    if (owner.members <= 0 && this.owners.get(owner.at) === owner) this.owners.delete(owner.at);
  }

  /**
   * `slice` stops counting (its settle was answered, or its hold has closed for sure): the room it
   * makes may take the owner's deferred next slice.
   */
  private confirm(slice: Slice): void {
    if (!slice.counted) return;
    slice.counted = false;
    const owner = slice.owner;
    owner.exposure -= slice.exposed;
    slice.exposed = 0;
    this.leaveOwner(owner);
    const live = owner.deferred;
    if (live === undefined) return;
    if (live.retired || live.next !== undefined || live.refilling !== undefined || this.slices.get(owner.at) !== live) {
      owner.deferred = undefined;
      return;
    }
    this.refill(owner.at, live);
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
      const owner = this.ownerOf(at);
      if (owner.exposure === 0 || this.maxSlice - owner.exposure >= args.amount) {
        return this.take(at, owner, args.accountId, args.keyId, args.amount, ttlMs);
      }
      // No room under the bound: a settle on its way makes some; else the request holds on its own.
      if (owner.settling) {
        await owner.settling;
        continue;
      }
      if (owner.members === 0) this.owners.delete(at);
      return this.inner.hold(args.accountId, args.amount, options);
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
  async prune(options: PruneArgs): Promise<PruneResult> {
    validHoldPruneArgs(options);
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
    // A request's take on its way becomes a slice (or nothing) first; each try is under the ledger's deadline.
    await Promise.all([...this.slices.values()].map((slice) => slice.taking));
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

  private async take(
    at: string,
    owner: Owner,
    accountId: string,
    keyId: string | undefined,
    amount: number,
    ttlMs: number,
  ) {
    // Nothing usable until the hold lands: `taking` makes requests wait for it.
    const placeholder = { ...this.slice(owner, accountId, keyId, '', 0), usableUntil: 0, holdsUntil: 0, closedBy: 0 };
    const finish = beginTake(placeholder);
    this.slices.place(at, placeholder);
    // What the bound leaves (the whole slice when nothing else is unconfirmed: at least the cost).
    const room = owner.exposure === 0 ? Number.POSITIVE_INFINITY : this.maxSlice - owner.exposure;
    let size = this.sizeFor(this.known.get(accountId), amount, room);
    // Counted from now: once it lands it can be spent.
    owner.members++;
    owner.exposure += size;
    placeholder.exposed = size;
    try {
      const sentAt = this.clock();
      const options = keyId === undefined ? { ttlMs: this.sliceTtlMs } : { keyId, ttlMs: this.sliceTtlMs };
      let held = await this.inner.hold(accountId, size, options);
      // Smaller slices while the balance covers the cost: each try is smaller than the last, so this
      // refuses only once the shared balance itself fell below the cost (the early-refusal bound).
      while (!held.ok && size > amount && held.balance >= amount) {
        const smaller = Math.min(size - 1, this.sizeFor(held.balance, amount, room));
        owner.exposure += smaller - size;
        placeholder.exposed = smaller;
        size = smaller;
        held = await this.inner.hold(accountId, size, options);
      }
      this.known.set(accountId, held.balance);
      if (!held.ok) {
        this.slices.delete(at);
        this.confirm(placeholder);
        return { ok: false, balance: held.balance + this.free(accountId) } satisfies HoldResult;
      }
      Object.assign(placeholder, this.slice(owner, accountId, keyId, held.holdId, sentAt), { exposed: size });
      this.credit(placeholder, size);
      placeholder.refillAt = refillPoint(size - amount, 0);
      return this.holdFrom(placeholder, amount, this.clock(), ttlMs);
    } catch (err) {
      this.slices.delete(at);
      this.confirm(placeholder);
      throw err;
    } finally {
      finish();
    }
  }

  /**
   * A slice's size: the cost, or more up to the largest slice, the `room` the bound leaves and a
   * `divisor`-th of the balance last seen.
   */
  private sizeFor(balance: number | undefined, amount: number, room: number): number {
    return Math.max(amount, Math.min(this.sliceMax, room, this.share(balance)));
  }

  /** A `divisor`-th of the balance last seen (`maxSlice` when none was). */
  private share(balance: number | undefined): number {
    return balance === undefined ? this.maxSlice : Math.floor(balance / this.divisor);
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
    if (slice.retired) {
      // A retired slice's returned credits can no longer be spent: they leave its exposure.
      if (slice.counted) {
        slice.exposed -= local.amount - charged;
        slice.owner.exposure -= local.amount - charged;
      }
      if (slice.open === 0) void this.settleSlice(slice);
    }
    return this.view(slice.accountId);
  }

  /** Takes no more requests on `slice` (nor on its successor, if one is waiting): it settles once they closed. */
  private retire(slice: Slice): void {
    if (slice.retired) return;
    const free = this.freeBy.get(slice.accountId) ?? 0;
    if (free === slice.free) this.freeBy.delete(slice.accountId);
    else this.freeBy.set(slice.accountId, free - slice.free);
    slice.retired = true;
    // Its free credits can no longer be spent: what it may still charge is what went or is held.
    if (slice.counted) {
      slice.exposed -= slice.free;
      slice.owner.exposure -= slice.free;
    }
    if (slice.owner.deferred === slice) slice.owner.deferred = undefined;
    this.retired.add(slice);
    const at = slice.owner.at;
    if (this.slices.get(at) === slice) this.slices.delete(at);
    const next = slice.next;
    slice.next = undefined;
    if (next) this.retire(next);
  }

  /**
   * Settles a retired slice with no open request: one `charge` entry of what its requests spent. Its
   * owner's requests with no room may wait for it.
   */
  private settleSlice(slice: Slice): Promise<void> {
    if (!this.retired.has(slice) || this.settling.has(slice)) return Promise.resolve();
    this.retired.delete(slice);
    this.settling.add(slice);
    const owner = slice.owner;
    const settled: Promise<void> = this.settleOnce(slice).finally(() => {
      if (owner.settling === settled) owner.settling = undefined;
      this.settles.delete(settled);
    });
    owner.settling = settled;
    this.settles.add(settled);
    return settled;
  }

  /**
   * One settle attempt of a slice. An answer ends it: what was spent and not charged is read by
   * `sliceOutcome` (a retry answering `charged: 0` before the hold could lapse means an earlier attempt
   * was applied). A failure leaves it to the next sweep while its hold may be open; after that nothing
   * can change its outcome, so it stops counting.
   */
  private async settleOnce(slice: Slice): Promise<void> {
    const sentAt = this.clock();
    let result: SettleResult;
    try {
      result = await this.inner.settle(slice.holdId, slice.spent);
    } catch {
      this.settling.delete(slice);
      // Sent while the hold could be open: it may have been applied, and its answer is lost.
      if (sentAt < slice.closedBy) slice.doubt = true;
      if (this.clock() < slice.closedBy) {
        this.retired.add(slice);
        return;
      }
      if (slice.doubt) this.unresolved += slice.spent;
      else this.uncharged += slice.spent;
      return this.confirm(slice);
    }
    this.settling.delete(slice);
    this.known.set(slice.accountId, result.balance);
    const { spent, doubt, lapsesFrom } = slice;
    const outcome = sliceOutcome({ spent, charged: result.charged, doubt, answeredAt: this.clock(), lapsesFrom });
    if (outcome === 'uncharged') this.uncharged += spent - result.charged;
    else if (outcome === 'unresolved') this.unresolved += spent - result.charged;
    this.confirm(slice);
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
