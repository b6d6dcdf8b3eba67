import { KeyStoreUnavailableError, UnsupportedError } from '#errors';
import { createTelemetry, observedLookup, type Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';
import type {
  ApiKeyRecord,
  KeyChange,
  KeyPatch,
  KeyStore,
  PublicKey,
  WritableKeyStore,
  WriteOptions,
} from '../types.js';
import { checkOptionNames } from '../validate/options.js';
import { validWholeNumber } from '../validate/whole.js';
import { CAPABILITIES, type Capabilities, type Capable, capabilityOf } from '../vocabulary/capabilities.js';
import { compactView, recordOf } from './compact-record.js';
import { ExpiringMap } from './expiring-map.js';

interface InFlight {
  promise: Promise<ApiKeyRecord | null>;
}

/** Options of {@link CachedKeyStore}. Every bound has a default; none can be switched off. */
export interface CachedKeyStoreOptions {
  /**
   * How long a found key is served from memory, in milliseconds. Bounds the revocation delay when no
   * change channel reaches this process.
   *
   * @default 30_000
   */
  ttlMs?: number;
  /**
   * Most found keys held at once; when full, the key cached longest ago makes room (with one TTL for
   * all, also the one closest to expiring).
   *
   * @default 10_000
   */
  max?: number;
  /**
   * How long "no such key" is remembered, in milliseconds.
   *
   * @default 5_000 (or `ttlMs`, if lower)
   */
  negativeTtlMs?: number;
  /**
   * Most unknown digests remembered at once; kept apart so that a flood of made-up keys cannot evict real ones.
   *
   * @default 10_000
   */
  negativeMax?: number;
  /**
   * How long one lookup in the wrapped store may take, in milliseconds. Past it the lookup rejects with
   * `KeyStoreUnavailableError` (so `authenticate` answers 503), every request waiting on it with it, and
   * the next request asks the store again: a lookup that never settles cannot hold requests or memory.
   * The cache declares it as its `deadline` capability, so `authenticate` arms no second timer when
   * its own `timeoutMs` is not shorter.
   *
   * @default 2_000
   */
  timeoutMs?: number;
  /**
   * Where to report cache answers (`keygate.cache.lookups` by `hit`, `negative_hit`, `miss`) and each
   * lookup a miss sends to the wrapped store (`keygate.store.lookups`, `keygate.store.lookup.duration`
   * and a `keygate.store.lookup` span with its result). Give telemetry here or to the wrapped store,
   * not both, or store lookups count twice. @default undefined (none)
   */
  telemetry?: TelemetryOptions;
}

// A record cached as the store returned it (one it may change in place, or not the one asked for),
// told apart from a view by its wrapper, never by its fields (they are the store's).
class Kept {
  constructor(readonly record: ApiKeyRecord) {}
}

const CACHE_OPTIONS = ['ttlMs', 'max', 'negativeTtlMs', 'negativeMax', 'timeoutMs', 'telemetry'];

// Timeouts raised by `lookup`, told apart from the store's own failures for telemetry.
const TIMEOUTS = new WeakSet<object>();
const isOwnTimeout = (err: unknown): boolean => typeof err === 'object' && err !== null && TIMEOUTS.has(err);

/**
 * An in-memory, bounded cache in front of any `KeyStore`. It remembers found and unknown digests,
 * shares one in-flight lookup among concurrent requests for the same digest, never serves an
 * entry past its TTL and never caches a failure (a store error still gives 503, never a stale allow).
 * Changes made through it, or announced by the store it wraps (its `changes` capability), evict at
 * once; a load that started before a change is not cached after it. A resync announced by the store
 * (its channel reconnected, so changes may have been missed) empties the cache. A lookup slower than
 * `timeoutMs` fails with `KeyStoreUnavailableError` and is forgotten.
 *
 * Capabilities: `wrapper` (the wrapped store), `deadline` (`timeoutMs`), `views` (what `authenticate` reads), and the wrapped store's own
 * `changes`, `usage`, `audit`, `auditedWrites` and `outbox`, when it declares them (writes pass their
 * options through unchanged, so a write's events and audit entries still go in its step).
 *
 * @example
 * const cached = new CachedKeyStore(new MemoryKeyStore(), { ttlMs: 30_000, max: 100_000 });
 * const keys = new KeyManager({ store: cached }); // changes through keys evict from the cache
 */
export class CachedKeyStore implements WritableKeyStore, Capable {
  declare readonly [CAPABILITIES]: Capabilities;
  /** How long a found key is served from memory, in milliseconds. */
  readonly ttlMs: number;
  /** How long one lookup in the wrapped store may take, in milliseconds. */
  readonly timeoutMs: number;
  // By digest: the key's public view (a sealed record, see compact-record.ts), or the record itself
  // (one a custom store may change in place, or that is not the one asked for).
  private readonly found: ExpiringMap<PublicKey | Kept>;
  private readonly missing: ExpiringMap<true>;
  private readonly inflight = new Map<string, InFlight>();
  // Lowest version a cached record of that id may have: what the newest change announced.
  private readonly floor: ExpiringMap<number>;
  private readonly unsubscribe: (() => void) | undefined;
  private readonly telemetry: Telemetry | undefined;
  // The wrapped store's name for telemetry, read once.
  private readonly storeName: string;
  // What cached records have in common (accounts, permission and allow lists, metadata), held once.
  private readonly shared = new Map<string, unknown>();

  constructor(
    readonly store: KeyStore,
    options: CachedKeyStoreOptions = {},
  ) {
    checkOptionNames(options, CACHE_OPTIONS, 'CachedKeyStore');
    this.ttlMs = validWholeNumber('ttlMs', options.ttlMs ?? 30_000);
    const max = validWholeNumber('max', options.max ?? 10_000);
    const negativeTtlMs = validWholeNumber('negativeTtlMs', options.negativeTtlMs ?? Math.min(5_000, this.ttlMs));
    const negativeMax = validWholeNumber('negativeMax', options.negativeMax ?? 10_000);
    this.timeoutMs = validWholeNumber('timeoutMs', options.timeoutMs ?? 2_000);
    this.telemetry = createTelemetry(options.telemetry);
    this.storeName = store.constructor?.name ?? 'store';
    this.found = new ExpiringMap(max, this.ttlMs);
    this.missing = new ExpiringMap(negativeMax, negativeTtlMs);
    this.floor = new ExpiringMap(max, this.ttlMs);
    const changes = capabilityOf(store, 'changes');
    const usage = capabilityOf(store, 'usage');
    const audit = capabilityOf(store, 'audit');
    const auditedWrites = capabilityOf(store, 'auditedWrites');
    const outbox = capabilityOf(store, 'outbox');
    this[CAPABILITIES] = {
      wrapper: { wrapped: store },
      deadline: this,
      views: { peekView: (hash, hit) => this.peekView(hash, hit) },
      ...(changes && { changes }),
      ...(usage && { usage }),
      ...(audit && { audit }),
      ...(auditedWrites && { auditedWrites }),
      ...(outbox && { outbox }),
    };
    this.unsubscribe = changes?.subscribe((change) =>
      change.type === 'resync' ? this.clear() : this.invalidate(change),
    );
  }

  /** The cached answer, without I/O: a record, `null` for a remembered unknown digest, `undefined` when not cached. */
  peek(hash: string): ApiKeyRecord | null | undefined {
    const held = this.found.get(hash);
    if (held !== undefined) {
      this.telemetry?.cache('hit');
      return held instanceof Kept ? held.record : recordOf(held, hash);
    }
    if (!this.missing.get(hash)) return undefined; // a miss: counted when the store is asked
    this.telemetry?.cache('negative_hit');
    return null;
  }

  // For `authenticate` (the `views` capability): the cached view of `hash`, or `undefined` when `peek` has the answer.
  private peekView(hash: string, hit = true): PublicKey | undefined {
    const held = this.found.get(hash);
    if (held === undefined || held instanceof Kept) return undefined;
    if (hit) this.telemetry?.cache('hit');
    return held;
  }

  findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const hit = this.peek(hash);
    if (hit !== undefined) return Promise.resolve(hit);
    this.telemetry?.cache('miss');
    let pending = this.inflight.get(hash);
    if (!pending) {
      pending = { promise: undefined as unknown as Promise<ApiKeyRecord | null> };
      this.inflight.set(hash, pending);
      pending.promise = this.load(hash, pending);
    }
    return pending.promise;
  }

  private async load(hash: string, entry: InFlight): Promise<ApiKeyRecord | null> {
    try {
      const answer =
        (await observedLookup(this.telemetry, this.storeName, () => this.lookup(hash), isOwnTimeout)) ?? null;
      // Cache only if no change arrived meanwhile (a change removes the in-flight entry) and the
      // record is not older than the newest version announced for its id.
      if (this.inflight.get(hash) !== entry) return answer;
      if (answer === null) this.missing.set(hash, true);
      else if (answer.version >= (this.floor.get(answer.id) ?? 0)) {
        const view = compactView(this.shared, hash, answer);
        this.found.set(hash, view ?? new Kept(answer));
      }
      return answer;
    } finally {
      if (this.inflight.get(hash) === entry) this.inflight.delete(hash);
    }
  }

  // The store's answer, or KeyStoreUnavailableError once `timeoutMs` have passed without one.
  private lookup(hash: string): Promise<ApiKeyRecord | null | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new KeyStoreUnavailableError(`key store did not answer within ${this.timeoutMs} ms`);
        TIMEOUTS.add(error);
        reject(error);
      }, this.timeoutMs);
    });
    const answer = new Promise<ApiKeyRecord | null | undefined>((resolve) => resolve(this.store.findByHash(hash)));
    return Promise.race([answer, expired]).finally(() => clearTimeout(timer));
  }

  /** Forgets everything known about the changed key, here and for any in-flight load. */
  invalidate(change: Pick<KeyChange, 'hash'> & Partial<KeyChange>): void {
    this.found.delete(change.hash);
    this.missing.delete(change.hash);
    this.inflight.delete(change.hash);
    if (change.id !== undefined && change.version !== undefined) {
      this.floor.set(change.id, Math.max(change.version, this.floor.get(change.id) ?? 0));
    }
  }

  /**
   * How many entries the cache holds now, for metrics: found keys (at most `max`), remembered unknown
   * digests (at most `negativeMax`) and lookups in flight.
   *
   * @example
   * const { found, missing } = cached.size; // e.g. export as gauges
   */
  get size(): { found: number; missing: number; inflight: number } {
    return { found: this.found.size, missing: this.missing.size, inflight: this.inflight.size };
  }

  /** Empties the cache: found keys, remembered unknown digests, and lookups in flight (not cached when they land). */
  clear(): void {
    this.found.clear();
    this.missing.clear();
    this.inflight.clear();
  }

  /** Stops listening to the wrapped store's changes. */
  close(): void {
    this.unsubscribe?.();
  }

  private writable(): WritableKeyStore {
    const s = this.store as Partial<WritableKeyStore>;
    if (typeof s.insert !== 'function' || typeof s.update !== 'function') {
      throw new UnsupportedError('store', 'the store wrapped by this CachedKeyStore does not support writes');
    }
    return this.store as WritableKeyStore;
  }

  async findById(id: string): Promise<ApiKeyRecord | null> {
    return (await this.writable().findById(id)) ?? null;
  }

  listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    return this.writable().listByAccount(accountId);
  }

  async insert(record: ApiKeyRecord, options?: WriteOptions): Promise<ApiKeyRecord> {
    const stored = await this.writable().insert(record, options);
    this.invalidate({ hash: stored.hash, id: stored.id, version: stored.version });
    return stored;
  }

  async update(id: string, patch: KeyPatch, condition?: WriteOptions): Promise<ApiKeyRecord> {
    const next = await this.writable().update(id, patch, condition);
    this.invalidate({ hash: next.hash, id: next.id, version: next.version });
    return next;
  }
}
