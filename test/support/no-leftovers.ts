// Every test that touches the shared PostgreSQL, Redis or MariaDB keeps to a schema or key prefix of its own
// and removes it afterwards (RUN_ID in test/stores/support/services.ts). Once every test file of a run
// has finished, this global teardown fails the run when keygate's tables sit in PostgreSQL's `public`
// schema, in MariaDB's `test` database, or keys sit under keygate's default Redis prefixes: some test
// wrote where a user's data lives.
// It looks only at those defaults, which no test may use, so test files running in parallel (their
// own schemas and prefixes still in use) never trip it.
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createClient } from 'redis';
import { MYSQL_URL, mysqlAvailable } from '../stores/support/mysql.js';
import { PG_URL, REDIS_URL, serviceAvailable } from '../stores/support/services.js';

/** keygate's tables in the `public` schema of the test database. */
export async function tablesInPublic(url = PG_URL): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
       WHERE table_schema = 'public' AND table_name LIKE 'keygate\\_%' ORDER BY table_name`,
    );
    return rows.map((row) => row.table_name);
  } finally {
    await client.end();
  }
}

/** Redis keys under keygate's default prefixes (`keygate:`, `keygate:ratelimit:`, ...), tests' own `keygate:test:` aside. */
export async function keysUnderDefaultPrefixes(url = REDIS_URL): Promise<string[]> {
  const client = await createClient({ url }).connect();
  try {
    const found: string[] = [];
    for await (const keys of client.scanIterator({ MATCH: 'keygate:*', COUNT: 1000 })) {
      found.push(...keys.filter((key) => !key.startsWith('keygate:test:')));
    }
    return found.sort();
  } finally {
    client.destroy();
  }
}

/** keygate's tables in MariaDB's `test` database (the one the tests connect through; each uses a database of its own). */
export async function tablesInMysqlTest(url = MYSQL_URL): Promise<string[]> {
  const conn = await mysql.createConnection({ uri: url });
  try {
    const [rows] = await conn.query(
      `SELECT table_name AS name FROM information_schema.tables
       WHERE table_schema = DATABASE() AND table_name LIKE 'keygate\\_%' ORDER BY table_name`,
    );
    return (rows as { name: string }[]).map((row) => row.name);
  } finally {
    await conn.end();
  }
}

/** Vitest's global teardown: runs once, after every test file of the run. */
export async function teardown(): Promise<void> {
  const left: string[] = [];
  if (await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL')) {
    const tables = await tablesInPublic();
    if (tables.length) left.push(`PostgreSQL ${PG_URL}, schema public: ${tables.join(', ')}`);
  }
  if (await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL')) {
    const keys = await keysUnderDefaultPrefixes();
    if (keys.length) left.push(`Redis ${REDIS_URL}: ${keys.slice(0, 10).join(', ')}${keys.length > 10 ? ', ...' : ''}`);
  }
  if (await mysqlAvailable()) {
    const tables = await tablesInMysqlTest();
    if (tables.length) left.push(`MariaDB ${MYSQL_URL}: ${tables.join(', ')}`);
  }
  if (left.length) {
    console.error(
      `\nA test left keygate data where a user's would be (give it a schema or prefix of its own with RUN_ID, and drop it afterwards):\n  ${left.join('\n  ')}\n`,
    );
    // Vitest only logs what a global teardown throws; the exit code is how the run fails.
    process.exitCode = 1;
  }
}
