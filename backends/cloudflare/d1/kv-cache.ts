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

/**
 * Prefix of the KV key where a write through `D1KeyStore` leaves the version it wrote (`{ version }`),
 * for as long as an entry may be served; lookups never write it, so a lookup's late put cannot hide it.
 */
const WRITE_PREFIX = 'keygate:write:';

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
 * A put never replaces a newer record: KV has no compare-and-set, so a write through the store first
 * leaves its version under `keygate:write:<digest>` (a key lookups never write, kept at least
 * `maxStaleMs`), then deletes the entry; a lookup's put is skipped when KV already holds a newer
 * entry or a newer write, and after the put the lookup reads the write's version again and deletes
 * its own entry when a write overtook it. So a lookup that read D1 before a revocation cannot leave
 * the old record behind it: at the location of the write (where KV reads its own writes), every
 * lookup that starts after both the revocation and that lookup have finished is refused. Other
 * locations, KV's own caching, and writers that bypass the store stay within `maxStaleMs`.
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

  /**
   * Stores `record` as read from D1 at `at` (epoch ms), unless KV holds a newer entry or a newer write
   * of it; and takes the entry back when a write of a newer version lands while it is put. A failed
   * put is ignored: the next lookup asks D1.
   */
  async put(record: ApiKeyRecord, at: number): Promise<void> {
    const version = Number(record.version);
    try {
      const [entry, written] = await Promise.all([
        this.kv.get(KV_PREFIX + record.hash),
        this.writtenVersion(record.hash),
      ]);
      const cached = entry === null ? undefined : parseEntry(entry);
      if (written > version || (cached && Number(cached.record.version) > version)) return;
      await this.kv.put(KV_PREFIX + record.hash, JSON.stringify({ at, record }), { expirationTtl: this.ttlS });
      // A write that began after the checks above deleted the entry before this put landed: take it back.
      if ((await this.writtenVersion(record.hash)) > version) await this.kv.delete(KV_PREFIX + record.hash);
    } catch {
      // A cache that could not be filled (or emptied) is a miss next time, or stale within maxStaleMs.
    }
  }

  /**
   * Records that `record` was written to D1 (its version, kept at least `maxStaleMs`), then deletes
   * its entry: in that order, so a lookup's put that lands after the delete finds the version when
   * it checks again. A failure is ignored: the entry then lives at most `maxStaleMs` from when it
   * was read, the same bound as a write made by another writer.
   */
  async wrote(record: ApiKeyRecord): Promise<void> {
    try {
      await this.kv.put(WRITE_PREFIX + record.hash, JSON.stringify({ version: Number(record.version) }), {
        expirationTtl: this.ttlS,
      });
    } catch {
      // The delete below still narrows the window; maxStaleMs bounds it all the same.
    }
    try {
      await this.kv.delete(KV_PREFIX + record.hash);
    } catch {
      // Bounded by maxStaleMs all the same.
    }
  }

  // The version a write through the store left for `hash`, or -1 when none is kept.
  private async writtenVersion(hash: string): Promise<number> {
    const raw = await this.kv.get(WRITE_PREFIX + hash);
    if (raw === null) return -1;
    try {
      const version = Number((JSON.parse(raw) as { version?: unknown }).version);
      return Number.isFinite(version) ? version : -1;
    } catch {
      return -1;
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
