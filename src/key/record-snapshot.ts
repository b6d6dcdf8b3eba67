import type { ApiKeyRecord } from '../types.js';

// How the request path tells whether a record object still says what it said when it was compiled:
// a walk over its fields and list entries, with no parsing and no allocation. Far cheaper than
// compiling again, and needed only for records a store did not freeze.

type Fields = Readonly<Record<string, unknown>>;

/** A copy of a record's fields, one level deep (lists and plain objects copied), taken at compile time. */
export type RecordSnapshot = Fields;

function copyOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice();
  return value !== null && typeof value === 'object' ? { ...value } : value;
}

/**
 * Whether `record` cannot change in place: frozen, and so is every list and object it holds
 * (`freezeRecord` makes records so; every built-in store returns them so).
 */
export function isSealed(record: ApiKeyRecord): boolean {
  if (!Object.isFrozen(record)) return false;
  for (const value of Object.values(record)) {
    if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) return false;
  }
  return true;
}

/** What `record` holds now, for {@link matchesSnapshot}. */
export function snapshotOf(record: ApiKeyRecord): RecordSnapshot {
  const copy: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(record)) copy[field] = copyOf(value);
  return copy;
}

// Both hold the same own fields with identical values; a list or plain object in `then` (a copy) is
// compared entry by entry with one level of `now`.
function sameFields(now: unknown, then: Fields, deep: boolean): boolean {
  if (now === null || typeof now !== 'object' || Array.isArray(now) !== Array.isArray(then)) return false;
  let count = 0;
  for (const k in now) {
    const a = (now as Fields)[k];
    const b = then[k];
    if (a !== b && !(deep && b !== null && typeof b === 'object' && sameFields(a, b as Fields, false))) return false;
    count++;
  }
  for (const _ in then) count--;
  return count === 0;
}

/** True when every field of `record` still equals the snapshot's (lists and plain objects entry by entry). */
export function matchesSnapshot(record: ApiKeyRecord, snapshot: RecordSnapshot): boolean {
  return sameFields(record, snapshot, true);
}
