import type { KeyChangeEvent, PublicKey, RateLimit } from '../types.js';
import type { AuditLog } from './audit-log.js';
import type { CreditBalance, HoldOptions, HoldResult, SettleResult } from './credit-ledger.js';
import type { Outbox } from './outbox.js';
import type { LeasableRateLimiter, RateLimitDecision } from './rate-limiter.js';
import type { UsageStore } from './usage-store.js';

/**
 * The one property through which a part of keygate (a store, a limiter, a wrapper) declares what it
 * offers the others. Parts never discover each other's abilities by probing method or property
 * names: they declare named {@link Capabilities} here, and readers ask {@link capabilityOf}. A rename
 * is then a type error, not a silent change of behaviour.
 *
 * Set it in the constructor and only `declare` the field: a class field with a computed key counts as
 * a side effect, so bundlers would keep the class in every bundle that imports its module.
 *
 * @example
 * class MyStore implements KeyStore, Capable {
 *   declare readonly [CAPABILITIES]: Capabilities;
 *   constructor() { this[CAPABILITIES] = { deadline: { timeoutMs: 500 } }; }
 *   async findByHash(hash: string) { ... }
 * }
 */
export const CAPABILITIES: unique symbol = Symbol.for('keygate.capabilities');

/**
 * A part whose every call gives up within `timeoutMs` milliseconds, so a caller whose own timeout is
 * no shorter arms no second timer: `authenticate` for a store, and for a shared rate limiter.
 *
 * @example
 * this[CAPABILITIES] = { deadline: { timeoutMs: 250 } }; // in the limiter's constructor
 */
export interface Deadline {
  /** The longest a call takes before it fails, in milliseconds. */
  readonly timeoutMs: number;
}

/**
 * A part that wraps another (a `CachedKeyStore` wraps the store it caches), so readers may look through it.
 *
 * @example
 * capabilityOf(new CachedKeyStore(store), 'wrapper')?.wrapped === store // true
 */
export interface Wrapper {
  /** The part this one wraps. */
  readonly wrapped: object;
}

/**
 * A rate limiter that may be answering from a per-process fallback while its shared limiter fails.
 *
 * @example
 * capabilityOf(limiter, 'degradable')?.degraded // true while the shared limiter is failing
 */
export interface Degradable {
  /** True while the shared limiter is failing and the fallback answers. */
  readonly degraded: boolean;
}

/**
 * A store that announces every write, its own and other processes', to subscribers. A store whose
 * channel can miss changes (a dropped connection) delivers `{ type: 'resync' }` once it listens again.
 *
 * @example
 * const off = capabilityOf(store, 'changes')?.subscribe((change) => console.log(change.type));
 */
export interface ChangeSource {
  /** Calls `listener` for every change; returns the function that stops it. */
  subscribe(listener: (change: KeyChangeEvent) => void): () => void;
}

/**
 * What a part may declare under {@link CAPABILITIES}; every entry is optional.
 *
 * @example
 * const caps: Capabilities = { deadline: { timeoutMs: 2_000 }, changes: feed, usage: store, audit: log };
 */
export interface Capabilities {
  /** Each call gives up within a deadline of its own. */
  readonly deadline?: Deadline;
  /** This part wraps another. */
  readonly wrapper?: Wrapper;
  /** This limiter may degrade to a per-process fallback. */
  readonly degradable?: Degradable;
  /** This store announces changes. */
  readonly changes?: ChangeSource;
  /** This store keeps usage statistics. */
  readonly usage?: UsageStore;
  /** This store holds an audit log of key management: a `KeyManager` over it writes every action there. */
  readonly audit?: AuditLog;
  /**
   * This store writes the audit entries a `KeyManager` hands with a key write (`WriteOptions.audit`)
   * into this log in the same step as the write (one transaction, one script, one batch): the write
   * and its entry are kept, or neither. It is the same object as the store's `audit` capability; a
   * `KeyManager` over a store whose `audit` log is not this one appends after the write instead.
   */
  readonly auditedWrites?: AuditLog;
  /**
   * This store holds an outbox: events a `KeyManager` hands with a write (`WriteOptions.events`) are
   * stored in the same step as the write, with their webhook deliveries.
   */
  readonly outbox?: Outbox;
  /** This credit ledger answers at once. */
  readonly synchronous?: SynchronousLedger;
  /** This rate limiter answers most requests at once (from a slice) and the rest asynchronously. */
  readonly immediateLimits?: ImmediateLimiter;
  /** This credit ledger answers most holds, settles and releases at once (from a slice) and the rest asynchronously. */
  readonly immediateCredits?: ImmediateLedger;
  /**
   * This rate limiter grants slices of a key's window and takes unspent units back: what
   * `LeasedRateLimiter` builds on.
   */
  readonly leases?: LeasableRateLimiter;
  /**
   * This store holds the public views of the keys it caches (`CachedKeyStore`): `authenticate` judges
   * a view as it is, where `peek` would rebuild a record.
   */
  readonly views?: ViewSource;
}

/**
 * What a store that caches public views answers `authenticate` with: the view held for `hash` (frozen,
 * its lists and objects frozen), or `undefined` when `peek` has the answer (a miss, a remembered
 * unknown digest, a record held as the store returned it).
 *
 * @example
 * const view = capabilityOf(store, 'views')?.peekView(hash); // PublicKey | undefined
 */
export interface ViewSource {
  /** The view held for `hash`; a cache hit for telemetry unless `hit` is false (the lookup that loaded it counted a miss). */
  peekView(hash: string, hit?: boolean): PublicKey | undefined;
}

/**
 * A credit ledger that answers at once (`MemoryCreditLedger`): `authenticate` and the adapters hold,
 * settle and release through these, so billing in memory adds no promise to a cached request. Anyone
 * may call them (through `capabilityOf`), so each checks its arguments as its asynchronous twin does
 * (`checkHoldArgs`, `checkSettleArgs`: a negative, fractional or NaN amount is `InvalidInputError`,
 * nothing changed), cheaply and without allocating, and throws where that twin rejects.
 *
 * @example
 * const sync = capabilityOf(ledger, 'synchronous');
 * const held = sync ? sync.holdSync('acct_1', 1) : await ledger.hold('acct_1', 1);
 */
export interface SynchronousLedger {
  /** `hold`, answered at once. */
  holdSync(accountId: string, amount: number, options?: HoldOptions): HoldResult;
  /** `settle`, answered at once. */
  settleSync(holdId: string, amount?: number): SettleResult;
  /** `release`, answered at once. */
  releaseSync(holdId: string): CreditBalance;
}

/**
 * A rate limiter that can often answer without its backend (`LeasedRateLimiter`, from the slice it
 * holds): `authenticate` asks `consumeNow` first and calls `consume` only when it answers
 * `undefined`, so an allowed request costs no promise. Anyone may call it (through `capabilityOf`),
 * so it checks its arguments as `consume` does (a negative or fractional cost is `InvalidInputError`,
 * nothing counted), cheaply and without allocating.
 *
 * @example
 * const now = capabilityOf(limiter, 'immediateLimits');
 * const decision = now?.consumeNow('key_1', { limit: 100, windowMs: 60_000 }, 1) ?? (await limiter.consume('key_1', { limit: 100, windowMs: 60_000 }, 1));
 */
export interface ImmediateLimiter {
  /** `consume`, answered at once, or `undefined` when only `consume` can answer. Throws where `consume` rejects. */
  consumeNow(keyId: string, limit: RateLimit, cost: number): RateLimitDecision | undefined;
}

/**
 * A credit ledger that can often answer without its backend (`LeasedCreditLedger`, from the slices it
 * holds): `authenticate` and the adapters ask these first and call `hold`, `settle` or `release` only
 * when they answer `undefined`, so a funded request costs no promise. `holdNow` checks its arguments
 * as `hold` does, like {@link SynchronousLedger}'s; `settleNow` and `releaseNow` answer only a hold id
 * they made (anything else is `undefined`, and the asynchronous twin checks it). Each throws where its
 * asynchronous twin rejects.
 *
 * @example
 * const now = capabilityOf(ledger, 'immediateCredits');
 * const held = now?.holdNow('acct_1', 1, { keyId: 'key_1' }) ?? (await ledger.hold('acct_1', 1, { keyId: 'key_1' }));
 */
export interface ImmediateLedger {
  /** `hold`, answered at once, or `undefined` when only `hold` can answer. */
  holdNow(accountId: string, amount: number, options?: HoldOptions): HoldResult | undefined;
  /** `settle` of the whole hold, answered at once, or `undefined` when only `settle` can answer. */
  settleNow(holdId: string): SettleResult | undefined;
  /** `release`, answered at once, or `undefined` when only `release` can answer. */
  releaseNow(holdId: string): CreditBalance | undefined;
}

/**
 * A part that declares its {@link Capabilities}.
 *
 * @example
 * const store: KeyStore & Capable = { findByHash, [CAPABILITIES]: { changes: feed } };
 */
export interface Capable {
  readonly [CAPABILITIES]: Capabilities;
}

/**
 * The capability `name` that `part` declares under {@link CAPABILITIES}, or undefined when it
 * declares none (or `part` is not an object). The one way keygate's parts learn what another offers.
 *
 * @example
 * capabilityOf(new CachedKeyStore(store), 'deadline')?.timeoutMs // 2000 (its timeoutMs)
 * capabilityOf(store, 'changes')?.subscribe((change) => cache.invalidate(change));
 */
export function capabilityOf<K extends keyof Capabilities>(part: unknown, name: K): Capabilities[K] | undefined {
  if (part === null || (typeof part !== 'object' && typeof part !== 'function')) return undefined;
  return (part as Partial<Capable>)[CAPABILITIES]?.[name];
}
