import { type ApiKeyRecord, freezeRecord } from 'keygate/store-kit';

/** The columns, in the order `recordParams` fills them. */
export const COLUMNS =
  'id, hash, account_id, name, mode, status, permissions, allowed_ips, hint, created_at, updated_at, expires_at, revoked_at, rotated_from, rotated_to, metadata, version, rate_limit, suspended_at, suspended_reason';

/** A row as `pg` or PGlite returns it: timestamps as Date (or text, if a type parser changed that), jsonb parsed. */
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
  created_at: Date | string;
  updated_at: Date | string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  rotated_from: string | null;
  rotated_to: string | null;
  metadata: unknown;
  version: number | string;
  rate_limit: unknown;
  suspended_at: Date | string | null;
  suspended_reason: string | null;
}

const iso = (v: Date | string) => (v instanceof Date ? v : new Date(v)).toISOString();
const isoOrNull = (v: Date | string | null) => (v === null ? null : iso(v));
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

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
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    expiresAt: isoOrNull(row.expires_at),
    revokedAt: isoOrNull(row.revoked_at),
    rotatedFrom: row.rotated_from,
    rotatedTo: row.rotated_to,
    metadata: json<Record<string, unknown>>(row.metadata),
    version: Number(row.version),
    rateLimit: json<ApiKeyRecord['rateLimit']>(row.rate_limit) ?? null,
    suspendedAt: isoOrNull(row.suspended_at),
    suspendedReason: row.suspended_reason,
  });
}

/** `$1..$20` for an INSERT of `record`, in `COLUMNS` order; jsonb values go as JSON text. */
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
    record.createdAt,
    record.updatedAt,
    record.expiresAt,
    record.revokedAt,
    record.rotatedFrom,
    record.rotatedTo,
    JSON.stringify(record.metadata),
    record.version,
    record.rateLimit ? JSON.stringify(record.rateLimit) : null,
    record.suspendedAt ?? null,
    record.suspendedReason ?? null,
  ];
}
