import { MIGRATIONS } from './migrations.js';
import type { SqlClient } from './sql-client.js';

// Any fixed pair of numbers will do as long as it is ours; the schema goes into the second half.
const LOCK_CLASS = 0x6b67;

/**
 * Creates or upgrades keygate's tables in `schema` (see {@link MIGRATIONS}): the versions not yet
 * recorded in `keygate_migrations` run in order, in one transaction, under an advisory lock that
 * serialises concurrent callers. Idempotent, and cheap when nothing is left to do: a schema already at
 * the newest version is found by two reads, with no transaction, lock or schema change (every CLI
 * command migrates first). `PostgresKeyStore.migrate` and
 * `PostgresDashboardStore.migrate` both run it: the dashboard's tables sit beside the keys it reads.
 *
 * @example
 * await migrateSchema(sqlClient(pool), 'public'); // { applied: [1, 2, 3, 4, 5] }, then { applied: [] }
 */
export async function migrateSchema(sql: SqlClient, schema: string): Promise<{ applied: number[] }> {
  if (await isCurrent(sql, schema)) return { applied: [] };
  const s = `"${schema}"`;
  return sql.transaction(async (q) => {
    await q('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, schema]);
    if (schema !== 'public') await q(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await q(
      `CREATE TABLE IF NOT EXISTS ${s}.keygate_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await q<{ version: number | null }>(`SELECT max(version) AS version FROM ${s}.keygate_migrations`);
    const current = Number(rows[0]?.version ?? 0);
    const applied: number[] = [];
    for (let v = current + 1; v <= MIGRATIONS.length; v++) {
      for (const statement of MIGRATIONS[v - 1] ?? []) await q(statement.replaceAll('T.', `${s}.`));
      await q(`INSERT INTO ${s}.keygate_migrations (version) VALUES ($1)`, [v]);
      applied.push(v);
    }
    return { applied };
  });
}

// Whether `schema` already holds every migration: read without a lock, so concurrent callers may all
// find it behind and then serialise on the lock above, where the recorded version decides again.
async function isCurrent(sql: SqlClient, schema: string): Promise<boolean> {
  const migrations = `"${schema}".keygate_migrations`;
  const { rows } = await sql.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [migrations]);
  if (!rows[0]?.present) return false;
  const { rows: latest } = await sql.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${migrations}`,
  );
  return Number(latest[0]?.version ?? 0) >= MIGRATIONS.length;
}
