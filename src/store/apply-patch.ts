import { InvalidInputError, KeyConflictError, KeyRevokedError } from '#errors';
import { sealCopy } from '../key/compiled-key.js';
import { quote } from '../redact/describe.js';
import type { ApiKeyRecord, KeyPatch, WriteCondition } from '../types.js';

/**
 * The record that results from applying `patch` to `current`, with `version` bumped, frozen.
 * Throws `KeyRevokedError` when `current` is revoked: no write ever changes a revoked key; and
 * `KeyConflictError` when `condition.ifVersion` is not `current.version`. Stores that hold records as
 * objects share this, so every store applies a patch the same way; the store keeps the read of
 * `current` and the write of the result atomic.
 *
 * @example
 * const next = applyPatch(current, { name: 'ci', updatedAt: new Date().toISOString() }, { ifVersion: 3 });
 */
export function applyPatch(current: ApiKeyRecord, patch: KeyPatch, condition: WriteCondition = {}): ApiKeyRecord {
  if (current.status === 'revoked') throw new KeyRevokedError(current.id);
  checkVersion(current, condition);
  const next: ApiKeyRecord = {
    ...current,
    ...definedFields(patch),
    version: current.version + 1,
  };
  return freezeRecord(next);
}

// A conditional write whose record moved on is a conflict the caller resolves (re-read, or give up).
function checkVersion(current: ApiKeyRecord, condition: WriteCondition): void {
  const expected = condition?.ifVersion;
  if (expected === undefined || expected === current.version) return;
  if (!Number.isInteger(expected)) throw new InvalidInputError('ifVersion', 'ifVersion must be a whole number');
  throw new KeyConflictError(`key ${quote(current.id)} is at version ${current.version}, not ${quote(expected)}`, {
    keyId: current.id,
  });
}

function definedFields(patch: KeyPatch): Partial<ApiKeyRecord> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(patch)) if (v !== undefined) out[k] = v;
  return out as Partial<ApiKeyRecord>;
}

/**
 * A deep-frozen copy of a record, so that nobody can change a stored or cached record in place (lists
 * and objects the record already holds frozen are shared, not copied).
 *
 * @example
 * const stored = freezeRecord({ ...record, version: 1 });
 */
export function freezeRecord(record: ApiKeyRecord): ApiKeyRecord {
  return sealCopy({ ...record }, record);
}
