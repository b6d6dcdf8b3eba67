import { type ApiKeyRecord, freezeRecord } from 'keygate/store-kit';

/** The columns of the key table, in the order {@link keyInsertParams} fills them. */
export const KEY_COLUMNS =
  'id, hash, account_id, name, mode, status, permissions, allowed_ips, hint, created_at, updated_at, expires_at, revoked_at, rotated_from, rotated_to, metadata, version, rate_limit, suspended_at, suspended_reason';

/** The columns an update writes, in the order {@link keyUpdateParams} fills them (then the id). */
export const KEY_UPDATE_COLUMNS = [
  'name',
  'status',
  'permissions',
  'allowed_ips',
  'updated_at',
  'expires_at',
  'revoked_at',
  'rotated_to',
  'metadata',
  'version',
  'rate_limit',
  'suspended_at',
  'suspended_reason',
] as const;

/**
 * A row of the key table as any driver returns it: times as Date or text, JSON parsed or as text,
 * the version as a number or text.
 *
 * @example
 * const record = keyRecordOf(row as KeyRow, codec);
 */
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

/**
 * How a dialect stores an instant: `write` turns an ISO 8601 string into the column's value,
 * `read` turns what the driver returns back into ISO 8601 (UTC, milliseconds).
 *
 * @example
 * const codec: TimeCodec = { write: (iso) => iso, read: (v) => new Date(v).toISOString() };
 */
export interface TimeCodec {
  write(iso: string): string;
  read(value: Date | string): string;
}

/**
 * ISO 8601 instants as they are (PostgreSQL's timestamptz takes them; SQLite keeps them as text,
 * normalised to milliseconds in UTC so text order is time order), read back from a Date or text.
 *
 * @example
 * ISO_TIME.write('2026-01-02T03:04:05Z') // '2026-01-02T03:04:05.000Z'
 */
export const ISO_TIME: TimeCodec = {
  write: (iso) => new Date(iso).toISOString(),
  read: (value) => (value instanceof Date ? value : new Date(value)).toISOString(),
};

/**
 * A JSON column's value: parsed already (jsonb, MySQL's JSON) or text (SQLite, MariaDB).
 *
 * @example
 * jsonOf<string[]>('["a"]') // ['a']
 */
export function jsonOf<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

const timeOrNull = (time: TimeCodec, v: string | null | undefined) =>
  v === null || v === undefined ? null : time.write(v);
const readOrNull = (time: TimeCodec, v: Date | string | null) => (v === null ? null : time.read(v));

// Every column's value for `record`: JSON as text, times through `time`.
function columnValues(record: ApiKeyRecord, time: TimeCodec): Record<string, unknown> {
  return {
    id: record.id,
    hash: record.hash,
    account_id: record.accountId,
    name: record.name,
    mode: record.mode,
    status: record.status,
    permissions: JSON.stringify(record.permissions),
    allowed_ips: JSON.stringify(record.allowedIps),
    hint: record.hint,
    created_at: time.write(record.createdAt),
    updated_at: time.write(record.updatedAt),
    expires_at: timeOrNull(time, record.expiresAt),
    revoked_at: timeOrNull(time, record.revokedAt),
    rotated_from: record.rotatedFrom,
    rotated_to: record.rotatedTo,
    metadata: JSON.stringify(record.metadata),
    version: record.version,
    rate_limit: record.rateLimit ? JSON.stringify(record.rateLimit) : null,
    suspended_at: timeOrNull(time, record.suspendedAt),
    suspended_reason: record.suspendedReason ?? null,
  };
}

/**
 * The record a key row holds.
 *
 * @example
 * const record = keyRecordOf(rows[0], ISO_TIME);
 */
export function keyRecordOf(row: KeyRow, time: TimeCodec): ApiKeyRecord {
  return freezeRecord({
    id: row.id,
    hash: row.hash,
    accountId: row.account_id,
    name: row.name,
    mode: row.mode,
    status: row.status,
    permissions: jsonOf<string[]>(row.permissions),
    allowedIps: jsonOf<string[]>(row.allowed_ips),
    hint: row.hint,
    createdAt: time.read(row.created_at),
    updatedAt: time.read(row.updated_at),
    expiresAt: readOrNull(time, row.expires_at),
    revokedAt: readOrNull(time, row.revoked_at),
    rotatedFrom: row.rotated_from,
    rotatedTo: row.rotated_to,
    metadata: jsonOf<Record<string, unknown>>(row.metadata),
    version: Number(row.version),
    rateLimit: jsonOf<ApiKeyRecord['rateLimit']>(row.rate_limit) ?? null,
    suspendedAt: readOrNull(time, row.suspended_at),
    suspendedReason: row.suspended_reason ?? null,
  });
}

/**
 * The values of an INSERT of `record`, in {@link KEY_COLUMNS} order: JSON as text, times through `time`.
 *
 * @example
 * await tx.run(`INSERT INTO keygate_keys (${KEY_COLUMNS}) VALUES (${marks(20)})`, keyInsertParams(record, ISO_TIME));
 */
export function keyInsertParams(record: ApiKeyRecord, time: TimeCodec): unknown[] {
  const values = columnValues(record, time);
  return KEY_COLUMNS.split(', ').map((column) => values[column]);
}

/**
 * The values of an UPDATE to the patched record `next`: {@link KEY_UPDATE_COLUMNS} in order, then the id.
 *
 * @example
 * await tx.run(keyUpdateSql('keygate_keys'), keyUpdateParams(next, ISO_TIME));
 */
export function keyUpdateParams(next: ApiKeyRecord, time: TimeCodec): unknown[] {
  const values = columnValues(next, time);
  return [...KEY_UPDATE_COLUMNS.map((column) => values[column]), next.id];
}

/**
 * The UPDATE of every written column of one key row, by id, in `table`.
 *
 * @example
 * keyUpdateSql('keygate_keys') // 'UPDATE keygate_keys SET name = ?, ... WHERE id = ?'
 */
export function keyUpdateSql(table: string): string {
  return `UPDATE ${table} SET ${KEY_UPDATE_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`;
}

/**
 * `n` placeholders, comma-separated.
 *
 * @example
 * marks(3) // '?, ?, ?'
 */
export function marks(n: number): string {
  return Array(n).fill('?').join(', ');
}
