import { migrateUnderLock } from '../sql/migrate.js';
import { runAsync } from '../sql/step.js';
import { MIGRATIONS } from './migrations.js';
import type { Query, SqlClient } from './sql-client.js';

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
export function migrateSchema(sql: SqlClient, schema: string): Promise<{ applied: number[] }> {
  const s = `"${schema}"`;
  // Read without a lock first, so concurrent callers may all find it behind and then serialise on the
  // lock below, where the recorded version decides again.
  const recorded = async (q: Query) => {
    const { rows } = await q<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [
      `${s}.keygate_migrations`,
    ]);
    if (!rows[0]?.present) return 0;
    const { rows: latest } = await q<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${s}.keygate_migrations`,
    );
    return Number(latest[0]?.version ?? 0);
  };
  return migrateUnderLock(MIGRATIONS, {
    recorded: () => recorded(sql.query),
    locked: (body) =>
      sql.transaction(async (q) => {
        await q('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, schema]);
        if (schema !== 'public') await q(`CREATE SCHEMA IF NOT EXISTS ${s}`);
        return runAsync(
          body({
            prepare: () =>
              q(
                `CREATE TABLE IF NOT EXISTS ${s}.keygate_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
              ),
            recorded: () => recorded(q),
            apply: (statement) => q(statement.replaceAll('T.', `${s}.`)),
            record: (v) => q(`INSERT INTO ${s}.keygate_migrations (version) VALUES ($1)`, [v]),
          }),
        );
      }),
  });
}
