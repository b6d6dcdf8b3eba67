import { isSealed } from '../auth/record-snapshot.js';
import type { ApiKeyRecord } from '../types.js';

// What a cache keeps of a record: the same fields, frozen, with the parts many keys have in common
// (the account, the permission list, the allow list, the metadata, the rate limit) shared between
// records that hold equal ones, and the digest shared with the cache's own key. A cache of 100,000
// keys then holds each account's and each permission list's text once, not once per key.

// The fields shared between records that hold equal values.
const SHARED = ['accountId', 'permissions', 'allowedIps', 'metadata', 'rateLimit'] as const;

/**
 * The record to cache under `hash`: a sealed record rebuilt with the parts `shared` already holds an
 * equal value of (`shared` keeps what it is given, up to 10,000 values, then starts again), any other
 * record (a custom store's mutable object, which it may change in place) as it is.
 */
export function compactRecord(shared: Map<string, unknown>, hash: string, record: ApiKeyRecord): ApiKeyRecord {
  if (record.hash !== hash || !isSealed(record)) return record;
  // A copy changed field by field, then frozen (a literal spreading it would be far larger).
  const copy: Record<string, unknown> = { ...record, hash };
  if (shared.size >= 1e4) shared.clear();
  for (const field of SHARED) {
    const id = `${field}:${JSON.stringify(record[field])}`;
    if (!shared.has(id)) shared.set(id, record[field]);
    copy[field] = shared.get(id);
  }
  return Object.freeze(copy) as unknown as ApiKeyRecord;
}
