// The key stores of the crash tests, opened the same way by the test and by its children: PostgreSQL
// (a schema of its own), Redis (a prefix of its own) and a SQLite file. Each is a store that writes
// a key write's audit entry in the write itself (its `auditedWrites` capability).
import Database from 'better-sqlite3';
import type { WritableKeyStore } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { type RedisClientLike, RedisKeyStore } from 'keygate/redis';
import { SqliteKeyStore } from 'keygate/sqlite';
import pg from 'pg';
import { createClient } from 'redis';

/** Which store, and where: a PostgreSQL URL and schema, a Redis URL and prefix, or a SQLite file. */
export type CrashBackend =
  | { kind: 'postgres'; url: string; schema: string }
  | { kind: 'redis'; url: string; prefix: string }
  | { kind: 'sqlite'; path: string };

/** A store over `backend`, and how to close what it opened. */
export async function openCrashStore(
  backend: CrashBackend,
): Promise<{ store: WritableKeyStore & { migrate?(): Promise<unknown> }; close(): Promise<void> }> {
  if (backend.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: backend.url, max: 4 });
    pool.on('error', () => {});
    const store = new PostgresKeyStore({ client: pool, schema: backend.schema });
    return { store, close: () => pool.end() };
  }
  if (backend.kind === 'redis') {
    const client = createClient({ url: backend.url });
    client.on('error', () => {});
    await client.connect();
    const store = new RedisKeyStore({ client: client as unknown as RedisClientLike, prefix: backend.prefix });
    return { store, close: async () => client.destroy() };
  }
  const database = new Database(backend.path);
  const store = new SqliteKeyStore({ database });
  return { store, close: async () => void database.close() };
}
