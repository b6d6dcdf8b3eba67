import { isSealed } from '../auth/record-snapshot.js';
import type { ApiKeyRecord } from '../types.js';

// What a cache keeps of a record: the same fields, frozen, with the parts many keys have in common
// (the account, the permission list, the allow list, the metadata, the rate limit) shared between
// records that hold equal ones, and the digest shared with the cache's own key. A cache of 100,000
// keys then holds each account's and each permission list's text once, not once per key.

const EMPTY_LIST: readonly string[] = Object.freeze([]);
const EMPTY_OBJECT = Object.freeze({});

/** Shares equal values among the records of one cache; bounded (emptied when full), so it cannot grow without end. */
export class RecordCompactor {
  private readonly shared = new Map<string, unknown>();

  constructor(private readonly max: number) {}

  private share<T>(id: string, value: T): T {
    const known = this.shared.get(id);
    if (known !== undefined) return known as T;
    if (this.shared.size >= this.max) this.shared.clear();
    this.shared.set(id, value);
    return value;
  }

  private list(field: string, list: readonly string[]): readonly string[] {
    return list.length === 0 ? EMPTY_LIST : this.share(`${field}\u0000${list.join('\u0000')}`, list);
  }

  /**
   * The record to cache under `hash`: a sealed record rebuilt with shared parts, any other (a custom
   * store's mutable object, which it may change in place) as it is.
   */
  compact(hash: string, record: ApiKeyRecord): ApiKeyRecord {
    if (record.hash !== hash || !isSealed(record)) return record;
    const { metadata, rateLimit } = record;
    // A copy changed field by field, then frozen (a literal spreading it would be far larger).
    const copy = { ...record } as { -readonly [F in keyof ApiKeyRecord]: ApiKeyRecord[F] };
    copy.hash = hash;
    // A key never changed since it was made has both dates equal: one string.
    if (record.updatedAt === record.createdAt) copy.updatedAt = record.createdAt;
    copy.accountId = this.share(`a\u0000${record.accountId}`, record.accountId);
    copy.permissions = this.list('p', record.permissions);
    copy.allowedIps = this.list('i', record.allowedIps);
    if (Object.keys(metadata).length === 0) copy.metadata = EMPTY_OBJECT;
    else copy.metadata = this.share(`m\u0000${JSON.stringify(metadata)}`, metadata);
    if (rateLimit) copy.rateLimit = this.share(`r\u0000${JSON.stringify(rateLimit)}`, rateLimit);
    return Object.freeze(copy);
  }
}
