import type { ApiKeyRecord } from '../types.js';
import type { AuditChanges } from '../vocabulary/audit-log.js';

// What a key write changed, as an audit entry's `changes`: the fields compared as JSON, so that an
// array or object equal in content counts as unchanged.

/** The fields of a key `key.updated` reports, in this order. */
const UPDATED_FIELDS = ['name', 'permissions', 'allowedIps', 'expiresAt', 'metadata', 'rateLimit'] as const;

/**
 * The fields of `after` that differ from `before`, each `{ before, after }`; `rateLimit` absent
 * counts as `null`.
 *
 * @example
 * changedFields(old, updated) // { allowedIps: { before: ['203.0.113.0/24'], after: [] } }
 */
export function changedFields(before: ApiKeyRecord, after: ApiKeyRecord): AuditChanges {
  const changes: Record<string, { before: unknown; after: unknown }> = {};
  for (const field of UPDATED_FIELDS) {
    const was = before[field] ?? null;
    const now = after[field] ?? null;
    if (JSON.stringify(was) !== JSON.stringify(now)) changes[field] = { before: was, after: now };
  }
  return changes;
}

/**
 * What a created or imported key is: its `name`, `mode` and `permissions` (before `null`). Never its
 * secret, digest or hint.
 *
 * @example
 * createdFields(record) // { name: { before: null, after: 'ci' }, mode: { ... }, permissions: { ... } }
 */
export function createdFields(record: ApiKeyRecord): AuditChanges {
  return {
    name: { before: null, after: record.name },
    mode: { before: null, after: record.mode },
    permissions: { before: null, after: record.permissions },
  };
}
