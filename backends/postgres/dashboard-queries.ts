import type { DailyTotal, KeyActivity, KeyPage, KeyPageQuery } from 'keygate/store-kit';
import { ISO_TIME, KEY_COLUMNS, type KeyRow, keyRecordOf } from '../sql/key-record.js';
import type { Query } from './sql-client.js';

// What PostgresDashboardStore asks of the database: used tokens, pages of the key list, and the usage
// of many keys, each in one statement.

/**
 * Migration 4: the record of single-use tokens (the dashboard's redeemed sign-in links and ended
 * sessions), kept where the keys live so that a link works once across every process.
 */
export const USED_TOKENS_MIGRATION: readonly string[] = [
  'CREATE TABLE T.keygate_used_tokens (token_id text PRIMARY KEY, expires_at timestamptz NOT NULL)',
  'CREATE INDEX keygate_used_tokens_expiry ON T.keygate_used_tokens (expires_at)',
];

/**
 * Records `tokenId` until `expiresAt`; true when this call recorded it. One statement: of two
 * concurrent calls the primary key lets exactly one insert; an expired record may be taken again.
 */
export async function markTokenUsed(
  query: Query,
  schema: string,
  tokenId: string,
  expiresAt: string,
): Promise<boolean> {
  const table = `"${schema}".keygate_used_tokens`;
  // Now and then, drop records whose token no longer verifies anyway.
  if (Math.random() < 1 / 64) await query(`DELETE FROM ${table} WHERE expires_at < now()`);
  const { rows } = await query(
    `INSERT INTO ${table} AS t (token_id, expires_at) VALUES ($1, $2)
      ON CONFLICT (token_id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE t.expires_at <= now()
      RETURNING token_id`,
    [tokenId, expiresAt],
  );
  return rows.length === 1;
}

/** True when `tokenId` is recorded and unexpired. */
export async function isTokenUsed(query: Query, schema: string, tokenId: string): Promise<boolean> {
  const { rows } = await query(
    `SELECT 1 FROM "${schema}".keygate_used_tokens WHERE token_id = $1 AND expires_at > now()`,
    [tokenId],
  );
  return rows.length > 0;
}

/**
 * Requests per day (every outcome added up) of many keys: one query on the usage table's primary
 * key, summed in the database and sent back as two arrays per key, so that an embedded database
 * hands over 50 rows rather than thousands.
 */
export async function dailyTotalsOfKeys(
  query: Query,
  schema: string,
  keyIds: readonly string[],
  from: string,
  to: string,
): Promise<DailyTotal[]> {
  if (keyIds.length === 0) return [];
  const { rows } = await query<{ key_id: string; offsets: number[]; totals: number[] }>(
    `SELECT key_id, array_agg(day - $2::date) AS offsets, array_agg(total) AS totals FROM (
        SELECT key_id, day, sum(count)::float8 AS total FROM "${schema}".keygate_usage
         WHERE key_id = ANY($1::text[]) AND day BETWEEN $2::date AND $3::date GROUP BY key_id, day
      ) per_day GROUP BY key_id`,
    [keyIds, from, to],
  );
  const start = Date.parse(`${from}T00:00:00Z`);
  return rows.flatMap((r) =>
    r.offsets.map((offset, i) => ({
      keyId: r.key_id,
      day: new Date(start + Number(offset) * 86_400_000).toISOString().slice(0, 10),
      total: Number(r.totals[i]),
    })),
  );
}

/** The last allowed use of many keys: one query on the activity table's primary key. */
export async function activityOfKeys(query: Query, schema: string, keyIds: readonly string[]): Promise<KeyActivity[]> {
  if (keyIds.length === 0) return [];
  const { rows } = await query<{ key_id: string; last_used_at: Date | string; last_used_ip: string | null }>(
    `SELECT key_id, last_used_at, last_used_ip FROM "${schema}".keygate_key_activity WHERE key_id = ANY($1::text[])`,
    [keyIds],
  );
  return rows.map((r) => ({
    keyId: r.key_id,
    lastUsedAt: new Date(r.last_used_at).toISOString(),
    lastUsedIp: r.last_used_ip,
  }));
}

/**
 * One page of an account's keys matching `query`, newest first, and how many match: one query on the
 * account index (a window count), so a page of 50 never reads the other 950 records. The search
 * text is matched with `strpos` on lower-cased name, hint and id, so `%` and `_` are plain characters.
 */
export async function keysPage(query: Query, schema: string, accountId: string, page: KeyPageQuery): Promise<KeyPage> {
  const needle = page.search ? page.search.toLowerCase() : null;
  const { rows } = await query<KeyRow & { total: string | number }>(
    `SELECT ${KEY_COLUMNS}, count(*) OVER () AS total FROM "${schema}".keygate_keys
      WHERE account_id = $1
        AND ($2::text IS NULL OR strpos(lower(name), $2) > 0 OR strpos(lower(hint), $2) > 0 OR strpos(lower(id), $2) > 0)
        AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR mode = $4)
      ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`,
    [accountId, needle, page.status ?? null, page.mode ?? null, page.limit, page.offset],
  );
  if (rows.length === 0 && page.offset > 0) {
    // Past the end: the window count needs a row; ask for the first page to learn the total.
    const first = await keysPage(query, schema, accountId, { ...page, offset: 0, limit: 1 });
    return { records: [], total: first.total };
  }
  return { records: rows.map((row) => keyRecordOf(row, ISO_TIME)), total: Number(rows[0]?.total ?? 0) };
}
