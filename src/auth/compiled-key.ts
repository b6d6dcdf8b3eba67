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
  /** The key's permissions: the view's own frozen list, no copy (a scan of a few strings costs less than a Set, and no memory). */
  readonly permissions: readonly string[];
  /** The allow, built on first use by `authenticate` and reused. */
  allowed: AuthResult | undefined;
  /** The denials that carry this key, by code, built on first use (most keys never need one). */
  denied: { [code in DenialCode]?: AuthResult } | undefined;
}

// The compiled form of a record, by record object. A frozen record (every built-in store freezes what
// it returns) cannot change, so its compiled form is kept as is: the cached path pays one WeakMap
// read. A custom store may hand out the same mutable object and change it in place; for such a record
// the memo also keeps a snapshot of what it was compiled from, and is rebuilt when the record differs.
interface Memo {
  readonly key: CompiledKey;
  readonly snapshot: RecordSnapshot;
}
const sealedKeys = new WeakMap<ApiKeyRecord, CompiledKey>();
// Compiled allow lists by frozen list: records that share one list object (a CachedKeyStore shares
// equal lists among the keys it holds) share its compiled form too.
const allowLists = new WeakMap<readonly string[], CompiledAllowList>();

function allowListOf(entries: readonly string[]): CompiledAllowList {
  if (entries.length === 0 || !Object.isFrozen(entries)) return compileAllowList(entries);
  let list = allowLists.get(entries);
  if (list === undefined) {
    list = compileAllowList(entries);
    allowLists.set(entries, list);
  }
  return list;
}
const memos = new WeakMap<ApiKeyRecord, Memo>();

// `value` itself when it is frozen (shared, not copied), else a frozen copy of it.
function frozen<T extends object>(value: T): T {
  return Object.isFrozen(value) ? value : Object.freeze((Array.isArray(value) ? [...value] : { ...value }) as T);
}

/**
 * The public view of a record: every field but the digest, frozen. Lists and objects the record
 * already holds frozen are shared, not copied.
 *
 * @example
 * toPublicKey(record).hash // undefined
 */
export function toPublicKey(record: ApiKeyRecord): PublicKey {
  // The rest object, changed where needed and then frozen: spreading it again into a literal that
  // overrides some of its fields would build an object about three times the size.
  const { hash: _digest, ...rest } = record;
  const view = rest as { -readonly [F in keyof PublicKey]: PublicKey[F] };
  view.permissions = frozen(record.permissions);
  view.allowedIps = frozen(record.allowedIps);
  view.metadata = frozen(record.metadata);
  view.rateLimit = record.rateLimit ? frozen(record.rateLimit) : null;
  view.suspendedAt ??= null;
  view.suspendedReason ??= null;
  return Object.freeze(view);
}

function build(record: ApiKeyRecord): CompiledKey {
  const view = toPublicKey(record);
  return {
    view,
    // Any status but these two (a custom store's garbage) counts as revoked: fail closed.
    revoked: record.status !== 'active' && record.status !== 'suspended',
    suspended: record.status === 'suspended',
    expiresAtMs: record.expiresAt ? Date.parse(record.expiresAt) : Number.POSITIVE_INFINITY,
    allowList: allowListOf(view.allowedIps),
    permissions: view.permissions,
    allowed: undefined,
    denied: undefined,
  };
}

/**
 * The compiled form of `record` as it is now: built on first use and kept as long as the record
 * object lives, rebuilt when a record that can change in place has changed.
 */
export function compileKey(record: ApiKeyRecord): CompiledKey {
  const sealed = sealedKeys.get(record);
  if (sealed !== undefined) return sealed;
  const memo = memos.get(record);
  if (memo !== undefined && matchesSnapshot(record, memo.snapshot)) return memo.key;
  const key = build(record);
  // Freezing is one-way: a record sealed now stays as it is, so it never needs checking again.
  if (isSealed(record)) sealedKeys.set(record, key);
  else memos.set(record, { key, snapshot: snapshotOf(record) });
  return key;
}
