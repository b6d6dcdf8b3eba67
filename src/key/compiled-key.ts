import { type CompiledAllowList, compileAllowList } from '../ip/allow-list.js';
import type { ApiKeyRecord, KeyRateLimit, NamedRateLimit, PublicKey, RateLimit } from '../types.js';
import type { DenialCode } from '../vocabulary/denials.js';
import type { AuthResult } from '../vocabulary/result.js';
import { isSealed, matchesSnapshot, type RecordSnapshot, snapshotOf } from './record-snapshot.js';

/** What the request path needs of a record, computed once per record object (and version of it). */
export interface CompiledKey {
  readonly view: PublicKey;
  /** The results that carry this key, by code (`ok` for the allow), built on first use and reused. */
  readonly results: { [code in DenialCode | 'ok']?: AuthResult };
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

/**
 * The compiled form of a view's allow list (always frozen), shared by every view that holds that list.
 *
 * @example
 * allowListOf(view.allowedIps).allows('203.0.113.9')
 */
export function allowListOf(entries: readonly string[]): CompiledAllowList {
  let list = allowLists.get(entries);
  if (list === undefined) {
    list = compileAllowList(entries);
    allowLists.set(entries, list);
  }
  return list;
}
const memos = new WeakMap<ApiKeyRecord, Memo>();

// A frozen list or object as it is (shared, not copied); anything else copied, as a list (a string
// becomes its characters, so no permission matches; a number or nothing throws: a fault, fail closed)
// or as an object, then frozen.
const list = <T>(value: readonly T[]): readonly T[] =>
  Array.isArray(value) && Object.isFrozen(value) ? value : Object.freeze([...value]);
const object = <T extends object>(value: T): T =>
  typeof value === 'object' && Object.isFrozen(value) ? value : Object.freeze({ ...value });
// A rate limit: one object, or a list of named ones, each entry frozen too (shared when already so).
const limits = (value: KeyRateLimit): KeyRateLimit => {
  if (!Array.isArray(value)) return object(value as RateLimit);
  const entries = value as readonly NamedRateLimit[];
  return Object.isFrozen(entries) && entries.every(Object.isFrozen) ? entries : Object.freeze(entries.map(object));
};

/**
 * The public view of a record: every field but the digest, frozen. Lists and objects the record
 * already holds frozen are shared, not copied.
 *
 * @example
 * toPublicKey(record).hash // undefined
 */
export function toPublicKey(record: ApiKeyRecord): PublicKey {
  const { hash: _digest, ...view } = record;
  return sealCopy(view, record);
}

/**
 * `copy` (a shallow copy of `record`, spread from it) with the record's lists and objects frozen,
 * absent fields filled in, and frozen itself. Changed field by field: a literal that spreads the
 * record and overrides these fields builds an object about three times the size.
 *
 * @example
 * sealCopy({ ...record }, record) // what freezeRecord returns
 */
export function sealCopy<T extends Partial<ApiKeyRecord>>(copy: T, record: ApiKeyRecord): T {
  const fields = copy as { -readonly [F in keyof ApiKeyRecord]?: ApiKeyRecord[F] };
  fields.permissions = list(record.permissions);
  fields.allowedIps = list(record.allowedIps);
  fields.metadata = object(record.metadata);
  // Records written before rate limits existed have no field: they read as "no limit of its own".
  fields.rateLimit = record.rateLimit ? limits(record.rateLimit) : null;
  // Records written before suspension existed have neither field: they read as "not suspended".
  fields.suspendedAt ??= null;
  fields.suspendedReason ??= null;
  return Object.freeze(copy);
}

// Expiry instants of views that expire, by view: parsed once, not on every request.
const expiries = new WeakMap<PublicKey, number>();

/**
 * When `view` expires, in epoch milliseconds: Infinity when it never does, NaN when `expiresAt` is not
 * a date (a fault: the caller fails closed). Parsed once per view.
 *
 * @example
 * expiresAtMsOf(view) // 1767225600000
 */
export function expiresAtMsOf(view: PublicKey): number {
  if (!view.expiresAt) return Infinity;
  let ms = expiries.get(view);
  if (ms === undefined) {
    ms = Date.parse(view.expiresAt);
    expiries.set(view, ms);
  }
  return ms;
}

function build(record: ApiKeyRecord): CompiledKey {
  const view = toPublicKey(record);
  return { view, results: {} };
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
