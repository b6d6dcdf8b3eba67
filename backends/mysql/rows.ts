import { type ApiKeyRecord, freezeRecord } from 'keygate/store-kit';
import { isoTime, isoTimeOrNull, json, sqlTime } from './sql-client.js';

/** The columns, in the order `recordParams` fills them. */
export const COLUMNS =
  'id, hash, account_id, name, mode, status, permissions, allowed_ips, hint, created_at, updated_at, expires_at, revoked_at, rotated_from, rotated_to, metadata, version, rate_limit, suspended_at, suspended_reason';

/** `?` for each of the {@link COLUMNS}. */
export const PLACEHOLDERS = COLUMNS.split(', ')
  .map(() => '?')
  .join(', ');

/** A row as mysql2 returns it when asked for text times: DATETIME as UTC text, JSON parsed (MySQL) or text (MariaDB). */
export interface KeyRow {
  id: string;
  hash: string;
  account_id: string;
  name: string;
  mode: ApiKeyRecord['mode'];
  status: ApiKeyRecord['status'];
  permissions: unknown;
  allowed_ips: unknown;
  hint: string;
  created_at: string | Date;
  updated_at: string | Date;
  expires_at: string | Date | null;
  revoked_at: string | Date | null;
  rotated_from: string | null;
  rotated_to: string | null;
  metadata: unknown;
  version: number | string;
  rate_limit: unknown;
  suspended_at: string | Date | null;
  suspended_reason: string | null;
}

/** The record a row holds. */
export function recordOf(row: KeyRow): ApiKeyRecord {
  return freezeRecord({
    id: row.id,
    hash: row.hash,
    accountId: row.account_id,
    name: row.name,
    mode: row.mode,
    status: row.status,
    permissions: json<string[]>(row.permissions),
    allowedIps: json<string[]>(row.allowed_ips),
    hint: row.hint,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    expiresAt: isoTimeOrNull(row.expires_at),
    revokedAt: isoTimeOrNull(row.revoked_at),
    rotatedFrom: row.rotated_from,
    rotatedTo: row.rotated_to,
    metadata: json<Record<string, unknown>>(row.metadata),
    version: Number(row.version),
    rateLimit: json<ApiKeyRecord['rateLimit']>(row.rate_limit) ?? null,
    suspendedAt: isoTimeOrNull(row.suspended_at),
    suspendedReason: row.suspended_reason,
  });
}

/** The values of an INSERT of `record`, in {@link COLUMNS} order; JSON values go as JSON text, times as UTC. */
export function recordParams(record: ApiKeyRecord): unknown[] {
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
    sqlTime(record.createdAt),
    sqlTime(record.updatedAt),
    sqlTime(record.expiresAt),
    sqlTime(record.revokedAt),
    record.rotatedFrom,
    record.rotatedTo,
    JSON.stringify(record.metadata),
    record.version,
    record.rateLimit ? JSON.stringify(record.rateLimit) : null,
    sqlTime(record.suspendedAt),
    record.suspendedReason ?? null,
  ];
}
