import { type CompiledAllowList, compileAllowList } from '../ip/allow-list.js';
import type { ApiKeyRecord, PublicKey } from '../types.js';
import type { DenialCode } from './denials.js';
import { isSealed, matchesSnapshot, type RecordSnapshot, snapshotOf } from './record-snapshot.js';
import type { AuthResult } from './result.js';

/** What the request path needs of a record, computed once per record object (and version of it). */
export interface CompiledKey {
  readonly view: PublicKey;
  readonly revoked: boolean;
  readonly suspended: boolean;
  /** Epoch milliseconds, or Infinity when the key never expires. */
  readonly expiresAtMs: number;
  readonly allowList: CompiledAllowList;
  readonly permissions: ReadonlySet<string>;
  /** The results that carry this key, by outcome, built on first use by `authenticate` and reused. */
  readonly results: { [outcome in DenialCode | 'allowed']?: AuthResult };
}

// The compiled form of a record, by record object. A frozen record (every built-in store freezes what
// it returns) cannot change, so its memo is used as is: the cached path pays one property read. A
// custom store may hand out the same mutable object and change it in place; for such a record the
// memo also keeps a snapshot of what it was compiled from, and is rebuilt when the record differs.
interface Memo {
  readonly key: CompiledKey;
  /** `null` for a record that cannot change in place. */
  readonly snapshot: RecordSnapshot | null;
}
const memos = new WeakMap<ApiKeyRecord, Memo>();

/**
 * The public view of a record: every field but the digest, frozen.
 *
 * @example
 * toPublicKey(record).hash // undefined
 */
export function toPublicKey(record: ApiKeyRecord): PublicKey {
  const { hash: _digest, ...view } = record;
  return Object.freeze({
    ...view,
    permissions: Object.freeze([...record.permissions]),
    allowedIps: Object.freeze([...record.allowedIps]),
    metadata: Object.freeze({ ...record.metadata }),
    rateLimit: record.rateLimit ? Object.freeze({ ...record.rateLimit }) : null,
    suspendedAt: record.suspendedAt ?? null,
    suspendedReason: record.suspendedReason ?? null,
  });
}

function build(record: ApiKeyRecord): CompiledKey {
  return {
    view: toPublicKey(record),
    // Any status but these two (a custom store's garbage) counts as revoked: fail closed.
    revoked: record.status !== 'active' && record.status !== 'suspended',
    suspended: record.status === 'suspended',
    expiresAtMs: record.expiresAt ? Date.parse(record.expiresAt) : Number.POSITIVE_INFINITY,
    allowList: compileAllowList(record.allowedIps),
    permissions: new Set(record.permissions),
    results: {},
  };
}

/**
 * The compiled form of `record` as it is now: built on first use and kept as long as the record
 * object lives, rebuilt when a record that can change in place has changed.
 */
export function compileKey(record: ApiKeyRecord): CompiledKey {
  const memo = memos.get(record);
  if (memo !== undefined && (memo.snapshot === null || matchesSnapshot(record, memo.snapshot))) return memo.key;
  const key = build(record);
  // Freezing is one-way: a record sealed now stays as it is, so it never needs checking again.
  memos.set(record, { key, snapshot: isSealed(record) ? null : snapshotOf(record) });
  return key;
}
