// The MariaDB (or MySQL) tests' database: each test file creates one of its own, named for its run
// (`keygate_test_<RUN_ID>`), and drops it at the end, with every pool it opened.
import mysql from 'mysql2/promise';
import { RUN_ID, serviceAvailable } from './services.js';

/** Where the MySQL tests find their server; its database is only used to connect (and must stay empty). */
export const MYSQL_URL = process.env.KEYGATE_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** Whether MariaDB answers (see `serviceAvailable`: with KEYGATE_REQUIRE_SERVICES=1 it throws instead). */
export const mysqlAvailable = () => serviceAvailable('MariaDB', MYSQL_URL, 'KEYGATE_MYSQL_URL');

/** A database of one test file. */
export interface TestDatabase {
  name: string;
  /** The server URL with this database. */
  url: string;
  /** A pool on this database (through `url` when given, e.g. a proxy's), ended by `drop`. */
  pool(options?: { url?: string; connectionLimit?: number; connectTimeout?: number }): mysql.Pool;
  /** Ends every pool and drops the database. */
  drop(): Promise<void>;
}

let count = 0;

/**
 * Creates a fresh database for this file's run.
 *
 * @example
 * const db = await openTestDatabase();
 * afterAll(() => db.drop());
 */
export async function openTestDatabase(label = 'db'): Promise<TestDatabase> {
  const name = `keygate_test_${RUN_ID}_${label}${++count}`;
  await admin(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const url = new URL(MYSQL_URL);
  url.pathname = `/${name}`;
  const pools: mysql.Pool[] = [];
  return {
    name,
    url: url.toString(),
    pool(options = {}) {
      const pool = mysql.createPool({
        uri: options.url ?? url.toString(),
        connectionLimit: options.connectionLimit ?? 10,
        connectTimeout: options.connectTimeout ?? 10_000,
      });
      pools.push(pool);
      return pool;
    },
    async drop() {
      await Promise.all(pools.map((p) => p.end().catch(() => {})));
      await admin(`DROP DATABASE IF EXISTS \`${name}\``);
    },
  };
}

async function admin(statement: string): Promise<void> {
  const conn = await mysql.createConnection({ uri: MYSQL_URL });
  try {
    await conn.query(statement);
  } finally {
    await conn.end();
  }
}

/** A URL of the same database reached through `port` on 127.0.0.1 (a `TcpProxy`). */
export function throughPort(url: string, port: number): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return proxied.toString();
}

/**
 * A mysql2 pool whose queries and connections never settle, as a server that stopped answering;
 * `unstick(err)` fails the connection a class is waiting for, as a reset would, after its deadline.
 */
export function stuckPool(): { pool: mysql.Pool; unstick(err: Error): void } {
  let fail: (err: Error) => void = () => {};
  const pool = {
    pool: {},
    query: () => new Promise(() => {}),
    getConnection: () => new Promise((_, reject) => (fail = reject)),
  } as unknown as mysql.Pool;
  return { pool, unstick: (err) => fail(err) };
}
