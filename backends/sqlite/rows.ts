import { type ApiKeyRecord, freezeRecord } from 'keygate/store-kit';
import type { SqlValue } from './driver.js';

/** A row of `keygate_keys` as SQLite returns it: JSON and timestamps as text. */
export interface KeyRow {
  id: string;
  hash: string;
  account_id: string;
  name: string;
  mode: ApiKeyRecord['mode'];
  status: ApiKeyRecord['status'];
  permissions: string;
  allowed_ips: string;
  hint: string;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  rotated_from: string | null;
  rotated_to: string | null;
  metadata: string;
  version: number;
  rate_limit: string | null;
  suspended_at: string | null;
  suspended_reason: string | null;
}

/**
 * A timestamp as keygate stores it: ISO 8601 in UTC with milliseconds, so that text order is time order.
 *
 * @example
 * iso('2026-01-02T03:04:05Z') // '2026-01-02T03:04:05.000Z'
 */
export const iso = (v: string | number | Date): string => new Date(v).toISOString();

/** {@link iso}, with null kept. */
export const isoOrNull = (v: string | number | Date | null | undefined): string | null =>
  v === null || v === undefined ? null : iso(v);

/**
 * The record a row holds.
 *
 * @example
 * const record = recordOf(driver.get<KeyRow>(KEY_SQL.byId, [id])!);
 */
export function recordOf(row: KeyRow): ApiKeyRecord {
  return freezeRecord({
    id: row.id,
    hash: row.hash,
    accountId: row.account_id,
    name: row.name,
    mode: row.mode,
    status: row.status,
    permissions: JSON.parse(row.permissions) as string[],
    allowedIps: JSON.parse(row.allowed_ips) as string[],
    hint: row.hint,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    expiresAt: isoOrNull(row.expires_at),
    revokedAt: isoOrNull(row.revoked_at),
    rotatedFrom: row.rotated_from,
    rotatedTo: row.rotated_to,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    version: Number(row.version),
    rateLimit: row.rate_limit === null ? null : (JSON.parse(row.rate_limit) as ApiKeyRecord['rateLimit']),
    suspendedAt: isoOrNull(row.suspended_at),
    suspendedReason: row.suspended_reason ?? null,
  });
}

/**
 * The parameters of `KEY_SQL.insert` for `record`, in `KEY_COLUMNS` order.
 *
 * @example
 * driver.run(KEY_SQL.insert, recordParams(record));
 */
export function recordParams(record: ApiKeyRecord): SqlValue[] {
  return [
    record.id,
    record.hash,
    record.accountId,
    record.name,
    record.mode,
    record.status,
    JSON.stringify(record.permissions),
    JSON.stringify(record.allowedIps),
    record.hint,
    iso(record.createdAt),
    iso(record.updatedAt),
    isoOrNull(record.expiresAt),
    isoOrNull(record.revokedAt),
    record.rotatedFrom,
    record.rotatedTo,
    JSON.stringify(record.metadata),
    record.version,
    record.rateLimit ? JSON.stringify(record.rateLimit) : null,
    isoOrNull(record.suspendedAt),
    record.suspendedReason ?? null,
  ];
}

/**
 * The parameters of `KEY_SQL.update` for the patched record `next`.
 *
 * @example
 * driver.run(KEY_SQL.update, updateParams(next));
 */
export function updateParams(next: ApiKeyRecord): SqlValue[] {
  return [
    next.name,
    next.status,
    JSON.stringify(next.permissions),
    JSON.stringify(next.allowedIps),
    iso(next.updatedAt),
    isoOrNull(next.expiresAt),
    isoOrNull(next.revokedAt),
    next.rotatedTo,
    JSON.stringify(next.metadata),
    next.version,
    next.rateLimit ? JSON.stringify(next.rateLimit) : null,
    isoOrNull(next.suspendedAt),
    next.suspendedReason ?? null,
    next.id,
  ];
}
