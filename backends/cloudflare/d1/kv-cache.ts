import { InvalidInputError } from 'keygate';
import { type ApiKeyRecord, freezeRecord, quote } from 'keygate/store-kit';
import type { KVLike } from './bindings.js';

/**
 * Prefix of every KV key keygate writes; the rest is the key's digest (never the raw key).
 *
 * @example
 * await env.KEYS.delete(KV_PREFIX + record.hash); // what a write through D1KeyStore does
 */
export const KV_PREFIX = 'keygate:key:';

// KV refuses an `expirationTtl` under 60 s; the entry's own timestamp is the bound, this only tidies up.
const KV_MIN_TTL_S = 60;

/**
 * The staleness bound of the KV cache, in milliseconds, checked: a positive finite number.
 *
 * @example
 * validMaxStaleMs(undefined) // 30_000
 */
export function validMaxStaleMs(value: unknown): number {
  if (value === undefined) return 30_000;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidInputError(
      'maxStaleMs',
      `maxStaleMs must be a positive number of milliseconds, got ${quote(value)}`,
    );
  }
  return value;
}

/**
 * Found records in a KV namespace, each stored with the time it was read from D1 (`at`, epoch ms,
 * taken before the read began). `get` answers a record only while `clock() - at < maxStaleMs`; past
 * that, or when the entry is missing, unreadable or from the future, it answers `undefined` and the
 * caller asks D1. KV's own expiry, its edge caching and the delay of a delete across locations do
 * not widen the bound: whichever copy KV serves carries its own `at`. A KV failure is a miss, never
 * an error: D1 decides.
 *
 * @example
 * const cache = new KvRecordCache(env.KEYS, 30_000, Date.now);
 * const record = (await cache.get(hash)) ?? (await readFromD1(hash));
 */
export class KvRecordCache {
  private readonly ttlS: number;

  constructor(
    private readonly kv: KVLike,
    readonly maxStaleMs: number,
    private readonly clock: () => number,
  ) {
    this.ttlS = Math.max(KV_MIN_TTL_S, Math.ceil(maxStaleMs / 1000));
  }

  async get(hash: string): Promise<ApiKeyRecord | undefined> {
    let raw: string | null;
    try {
      raw = await this.kv.get(KV_PREFIX + hash);
    } catch {
      return undefined;
    }
    if (raw === null) return undefined;
    const entry = parseEntry(raw);
    if (!entry || entry.record.hash !== hash) return undefined;
    const ageMs = this.clock() - entry.at;
    if (ageMs < 0 || ageMs >= this.maxStaleMs) return undefined;
    return freezeRecord(entry.record);
  }

  /** Stores `record` as read from D1 at `at` (epoch ms). A failed put is ignored: the next lookup asks D1. */
  async put(record: ApiKeyRecord, at: number): Promise<void> {
    try {
      await this.kv.put(KV_PREFIX + record.hash, JSON.stringify({ at, record }), { expirationTtl: this.ttlS });
    } catch {
      // A cache that could not be filled is a miss next time.
    }
  }

  /**
   * Deletes the entry of `hash`. A failed delete is ignored: the entry then lives at most `maxStaleMs`
   * from when it was read, the same bound as a write made by another writer.
   */
  async drop(hash: string): Promise<void> {
    try {
      await this.kv.delete(KV_PREFIX + hash);
    } catch {
      // Bounded by maxStaleMs all the same.
    }
  }
}

function parseEntry(raw: string): { at: number; record: ApiKeyRecord } | undefined {
  try {
    const entry = JSON.parse(raw) as { at?: unknown; record?: unknown };
    if (typeof entry?.at !== 'number' || typeof entry.record !== 'object' || entry.record === null) return undefined;
    return entry as { at: number; record: ApiKeyRecord };
  } catch {
    return undefined;
  }
}

/**
 * `value` if it is a KV namespace (it has `get`, `put` and `delete`), undefined if absent; otherwise
 * `InvalidInputError` naming `cache`.
 *
 * @example
 * const kv = validKv(env.KEYS);
 */
export function validKv(value: unknown): KVLike | undefined {
  if (value === undefined) return undefined;
  const kv = value as Partial<KVLike> | null;
  if (typeof kv?.get !== 'function' || typeof kv.put !== 'function' || typeof kv.delete !== 'function') {
    throw new InvalidInputError('cache', 'cache must be a Workers KV namespace binding (with get, put and delete)');
  }
  return kv as KVLike;
}
