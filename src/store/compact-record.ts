import { allowListOf } from '../key/compiled-key.js';
import { isSealed } from '../key/record-snapshot.js';
import type { ApiKeyRecord, PublicKey } from '../types.js';

// What a cache keeps of a record: its public view alone (the object `authenticate` hands out as a
// result's `key`), one frozen object per key with no second copy, the digest being the cache's own
// key. The parts many keys have in common (the account, the permission list, the allow list, the
// metadata, the rate limit, the mode and status) are shared between keys that hold equal ones, and
// an `updatedAt` equal to `createdAt` is the same string. A cache of 100,000 keys then holds each
// account's and each permission list's text once, not once per key.

// The fields shared between views that hold equal values. The rate limit is kept as it is, by
// reference: whatever its shape, equal ones (by JSON) share one object.
const SHARED = ['accountId', 'mode', 'status', 'permissions', 'allowedIps', 'metadata', 'rateLimit'] as const;

/**
 * The view to cache for a record the store returned under `hash`, or `undefined` when the record
 * must be kept as it is: a record not sealed (a custom store's mutable object, which it may change in
 * place) that is not the one asked for, or with garbage `authenticate` must refuse. `shared` keeps what it is given, up to 10,000 values, then
 * starts again.
 *
 * @example
 * const view = compactView(shared, hash, record); // record without `hash`, frozen, parts shared
 */
export function compactView(shared: Map<string, unknown>, hash: string, record: ApiKeyRecord): PublicKey | undefined {
  if (record.hash !== hash || !isSealed(record)) return undefined;
  if (!Array.isArray(record.permissions) || !Array.isArray(record.allowedIps)) return undefined;
  // An expiry that is not a date fails closed on the record's path (503), never read as "no expiry".
  if (record.expiresAt && Number.isNaN(Date.parse(record.expiresAt))) return undefined;
  if (shared.size >= 1e4) shared.clear();
  const same = <F extends (typeof SHARED)[number]>(field: F): ApiKeyRecord[F] => {
    const value = record[field] ?? null;
    const id = `${field}:${JSON.stringify(value)}`;
    if (!shared.has(id)) shared.set(id, value);
    return shared.get(id) as ApiKeyRecord[F];
  };
  const { createdAt, updatedAt } = record;
  // A literal of the known fields is the smallest object V8 builds; any other field a store adds follows.
  const view: Record<string, unknown> = {
    id: record.id,
    accountId: same('accountId'),
    name: record.name,
    mode: same('mode'),
    status: same('status'),
    permissions: same('permissions'),
    allowedIps: same('allowedIps'),
    hint: record.hint,
    createdAt,
    updatedAt: updatedAt === createdAt ? createdAt : updatedAt,
    expiresAt: record.expiresAt,
    revokedAt: record.revokedAt,
    suspendedAt: record.suspendedAt ?? null,
    suspendedReason: record.suspendedReason ?? null,
    rotatedFrom: record.rotatedFrom,
    rotatedTo: record.rotatedTo,
    metadata: same('metadata'),
    rateLimit: same('rateLimit'),
    version: record.version,
  };
  for (const field of Object.keys(record))
    if (!(field in view) && field !== 'hash') view[field] = record[field as never];
  try {
    // Compiled (and kept, for every key that shares the list) now: a list that does not compile fails
    // closed on the record's path (503), never thrown at a request.
    allowListOf(view.allowedIps as readonly string[]);
  } catch {
    return undefined;
  }
  return Object.freeze(view) as unknown as PublicKey;
}

/**
 * The record a cached view stands for: the view's fields and `hash`, frozen.
 *
 * @example
 * recordOf(view, hash).hash === hash // true
 */
export function recordOf(view: PublicKey, hash: string): ApiKeyRecord {
  return Object.freeze({ ...view, hash });
}
