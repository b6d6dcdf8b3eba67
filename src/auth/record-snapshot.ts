import type { ApiKeyRecord } from '../types.js';

// How the request path tells whether a record object still says what it said when it was compiled.
// Comparing is a walk over the record's fields and list entries, with no parsing and no allocation:
// far cheaper than compiling again, and needed only for records a store did not freeze.

// Every field a record has, plus optional ones a store may add in place later.
const FIELDS: readonly string[] = [
  'id',
  'hash',
  'accountId',
  'name',
  'mode',
  'status',
  'permissions',
  'allowedIps',
  'hint',
  'createdAt',
  'updatedAt',
  'expiresAt',
  'revokedAt',
  'rotatedFrom',
  'rotatedTo',
  'metadata',
  'version',
  'rateLimit',
];

/** A copy of a record's fields, one level deep (lists and plain objects copied), taken at compile time. */
export interface RecordSnapshot {
  readonly fields: readonly string[];
  readonly values: readonly unknown[];
}

type Fields = Readonly<Record<string, unknown>>;

function copyOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice();
  if (value !== null && typeof value === 'object') return { ...value };
  return value;
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
  const fields = [...new Set([...FIELDS, ...Object.keys(record)])];
  return { fields, values: fields.map((f) => copyOf((record as unknown as Fields)[f])) };
}

function sameList(now: unknown, then: readonly unknown[]): boolean {
  if (!Array.isArray(now) || now.length !== then.length) return false;
  for (let i = 0; i < then.length; i++) if (now[i] !== then[i]) return false;
  return true;
}

function sameObject(now: unknown, then: Fields): boolean {
  if (now === null || typeof now !== 'object' || Array.isArray(now)) return false;
  let count = 0;
  for (const k in now) {
    if (!Object.hasOwn(now, k)) continue;
    if (!Object.hasOwn(then, k) || (now as Fields)[k] !== then[k]) return false;
    count++;
  }
  for (const k in then) if (Object.hasOwn(then, k)) count--;
  return count === 0;
}

/** True when every field of `record` still equals the snapshot's (lists and plain objects entry by entry). */
export function matchesSnapshot(record: ApiKeyRecord, snapshot: RecordSnapshot): boolean {
  const { fields, values } = snapshot;
  for (let i = 0; i < fields.length; i++) {
    const now = (record as unknown as Fields)[fields[i] as string];
    const then = values[i];
    if (now === then) continue;
    if (Array.isArray(then)) {
      if (!sameList(now, then)) return false;
    } else if (then === null || typeof then !== 'object' || !sameObject(now, then as Fields)) {
      return false;
    }
  }
  return true;
}
