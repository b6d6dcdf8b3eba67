import { KeyStoreUnavailableError } from 'keygate';
import { migrateUnderLock } from '../sql/migrate.js';
import { runAsync } from '../sql/step.js';
import { keyStoreMigrations } from './migrations.js';
import type { Query, SqlClient } from './sql-client.js';

/** Seconds a migration waits for another process's migration of the same tables before giving up. */
const LOCK_WAIT_S = 60;

/**
 * Runs `statements` on one connection while it holds the named lock `GET_LOCK` for the prefix in the
 * pool's database, so concurrent callers (in any process) run them one after the other. Refuses a
 * session in `NO_BACKSLASH_ESCAPES` mode: mysql2 escapes values with backslashes, which that mode
 * would read differently.
 *
 * @example
 * await withMigrationLock(sql, 'keygate_', 'limits', async (q) => { await q('CREATE TABLE IF NOT EXISTS ...'); });
 */
export function withMigrationLock<T>(
  sql: SqlClient,
  prefix: string,
  part: string,
  work: (q: Query) => Promise<T>,
): Promise<T> {
  return sql.session(async (q) => {
    const { rows: modes } = await q<{ mode: string }>('SELECT @@SESSION.sql_mode AS mode');
    if (String(modes[0]?.mode ?? '').includes('NO_BACKSLASH_ESCAPES')) {
      throw new KeyStoreUnavailableError(
        'keygate needs a MySQL session without NO_BACKSLASH_ESCAPES in its sql_mode (mysql2 escapes values with backslashes)',
      );
    }
    // A lock name is at most 64 characters: the database and prefix go in as a digest.
    const name = "CONCAT('keygate:', LEFT(SHA1(CONCAT(DATABASE(), '.', ?)), 40))";
    const { rows } = await q<{ got: number | string | null }>(`SELECT GET_LOCK(${name}, ?) AS got`, [
      `${prefix}:${part}`,
      LOCK_WAIT_S,
    ]);
    if (Number(rows[0]?.got) !== 1) {
      throw new KeyStoreUnavailableError(
        `another migration of the ${prefix}* tables held its lock for ${LOCK_WAIT_S} s`,
      );
    }
    try {
      return await work(q);
    } finally {
      await q(`DO RELEASE_LOCK(${name})`, [`${prefix}:${part}`]);
    }
  });
}

/**
 * Creates or upgrades the key store's tables (see `keyStoreMigrations`) for `prefix` in the pool's
 * database: the versions not yet recorded in `<prefix>migrations` run in order under a named lock.
 * Idempotent, and cheap when nothing is left to do (two reads, no lock). `MysqlKeyStore.migrate` and
 * `MysqlDashboardStore.migrate` both run it.
 *
 * @example
 * await migrateKeyStore(sqlClient(pool), 'keygate_'); // { applied: [1] }, then { applied: [] }
 */
export function migrateKeyStore(sql: SqlClient, prefix: string): Promise<{ applied: number[] }> {
  return migrateUnderLock(keyStoreMigrations(prefix), {
    recorded: () => currentVersion(sql.query, prefix),
    locked: (body) =>
      withMigrationLock(sql, prefix, 'keys', (q) =>
        runAsync(
          body({
            prepare: () =>
              q(
                `CREATE TABLE IF NOT EXISTS ${prefix}migrations (version INT NOT NULL PRIMARY KEY, applied_at DATETIME(3) NOT NULL)
                  ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
              ),
            recorded: () => currentVersion(q, prefix),
            apply: (statement) => q(statement),
            record: (v) => q(`INSERT INTO ${prefix}migrations (version, applied_at) VALUES (?, UTC_TIMESTAMP(3))`, [v]),
          }),
        ),
      ),
  });
}

// The newest version recorded, 0 when the table is missing: read without a lock, so concurrent callers
// may all find it behind and then serialise on the lock, where the recorded version decides again.
async function currentVersion(q: Query, prefix: string): Promise<number> {
  const { rows } = await q(
    'SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?',
    [`${prefix}migrations`],
  );
  if (rows.length === 0) return 0;
  const { rows: latest } = await q<{ version: number | string | null }>(
    `SELECT max(version) AS version FROM ${prefix}migrations`,
  );
  return Number(latest[0]?.version ?? 0);
}
