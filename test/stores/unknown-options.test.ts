// Every backend class, the Drizzle helpers, the dashboard and the telemetry options refuse a member
// they do not know, at construction, naming the nearest known one, and build nothing first: no
// connection taken, no table, no key written. Each row spells one real option wrong, as a user would.

import Database from 'better-sqlite3';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { CachedKeyStore, InvalidInputError, KeyManager, MemoryKeyStore } from 'keygate';
import {
  D1AuditLog,
  D1DashboardStore,
  D1KeyStore,
  DurableObjectCreditLedger,
  DurableObjectRateLimiter,
  type KVLike,
} from 'keygate/cloudflare';
import { dashboard } from 'keygate/dashboard';
import {
  drizzleMysqlStores,
  drizzlePgStores,
  drizzleSqliteStores,
  keygateMysqlMigrationSql,
  keygateMysqlTables,
  keygatePgMigrationSql,
  keygatePgTables,
  keygateSqliteMigrationSql,
} from 'keygate/drizzle';
import { MysqlCreditLedger, MysqlDashboardStore, MysqlKeyStore, MysqlRateLimiter } from 'keygate/mysql';
import { globalTelemetry } from 'keygate/otel';
import { PostgresCreditLedger, PostgresDashboardStore, PostgresKeyStore, PostgresRateLimiter } from 'keygate/postgres';
import {
  RedisAttemptCounter,
  RedisCreditLedger,
  RedisDashboardStore,
  RedisKeyStore,
  RedisRateLimiter,
} from 'keygate/redis';
import {
  SqliteAuditLog,
  SqliteCreditLedger,
  SqliteDashboardStore,
  SqliteKeyStore,
  SqliteOutbox,
  SqliteRateLimiter,
} from 'keygate/sqlite';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { MiniflarePool } from '../cloudflare/support/miniflare.js';
import { MYSQL_URL, mysqlAvailable } from './support/mysql.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from './support/services.js';

const pgUp = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redisUp = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const mysqlUp = await mysqlAvailable();

/**
 * The refusal `make` throws: an InvalidInputError for `field`, reason unknown_option, naming `near`
 * (or, when no option is within two edits, listing them all).
 */
function expectRefused(make: () => unknown, field: string, near: string | null): void {
  let thrown: unknown;
  try {
    make();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(InvalidInputError);
  const err = thrown as InvalidInputError;
  expect(err.code).toBe('invalid_input');
  expect(err.field).toBe(field);
  expect(err.issues).toEqual([expect.objectContaining({ field, reason: 'unknown_option' })]);
  if (near === null) expect(err.message).toMatch(/; the options are \w+/);
  else expect(err.message).toContain(`did you mean \`${near}\`?`);
}

// [class, its options with one member misspelt, that member, the option it meant]
type Row = [string, () => unknown, string, string | null];

describe.skipIf(!pgUp)('PostgreSQL classes refuse an unknown option before taking a connection', () => {
  const schema = `unknown_${RUN_ID}`;
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  afterAll(() => pool.end());
  const rows: Row[] = [
    [
      'PostgresKeyStore',
      () => new PostgresKeyStore({ client: pool, schema, onErorr: () => {} } as never),
      'onErorr',
      'onError',
    ],
    ['PostgresKeyStore', () => new PostgresKeyStore({ client: pool, schemaName: schema } as never), 'schemaName', null],
    [
      'PostgresRateLimiter',
      () => new PostgresRateLimiter({ client: pool, schema, timeout: 100 } as never),
      'timeout',
      'timeoutMs',
    ],
    [
      'PostgresCreditLedger',
      () => new PostgresCreditLedger({ client: pool, schema, timeoutMS: 100 } as never),
      'timeoutMS',
      'timeoutMs',
    ],
    [
      'PostgresDashboardStore',
      () => new PostgresDashboardStore({ client: pool, schemas: schema } as never),
      'schemas',
      'schema',
    ],
    [
      'drizzlePgStores',
      () => drizzlePgStores(drizzlePg(pool), { schema, rateLimiterTimeout: 5 } as never),
      'rateLimiterTimeout',
      'rateLimiterTimeoutMs',
    ],
    ['keygatePgTables', () => keygatePgTables({ shema: schema } as never), 'shema', 'schema'],
    ['keygatePgMigrationSql', () => keygatePgMigrationSql({ schema, afterVersion: 0 } as never), 'afterVersion', null],
  ];
  it.each(rows)('%s: refused, naming the nearest option', (_name, make, field, near) => {
    expectRefused(make, field, near);
  });
  it('took no connection and created no table', async () => {
    for (const [, make] of rows) expect(make).toThrow(InvalidInputError);
    expect(pool.totalCount).toBe(0);
    const tables = await pool.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [
      schema,
    ]);
    expect(tables.rows).toEqual([]);
  });
});

describe.skipIf(!mysqlUp)('MySQL/MariaDB classes refuse an unknown option before taking a connection', () => {
  const tablePrefix = `unknown_${RUN_ID}_`;
  const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 2 });
  afterAll(() => pool.end());
  const rows: Row[] = [
    ['MysqlKeyStore', () => new MysqlKeyStore({ client: pool, tableName: 'keys' } as never), 'tableName', null],
    [
      'MysqlKeyStore',
      () => new MysqlKeyStore({ client: pool, tablePrefix, pollInterval: 100 } as never),
      'pollInterval',
      'pollIntervalMs',
    ],
    [
      'MysqlRateLimiter',
      () => new MysqlRateLimiter({ client: pool, tablePrefix, timeout: 100 } as never),
      'timeout',
      'timeoutMs',
    ],
    [
      'MysqlCreditLedger',
      () => new MysqlCreditLedger({ client: pool, tablePrefx: tablePrefix } as never),
      'tablePrefx',
      'tablePrefix',
    ],
    [
      'MysqlDashboardStore',
      () => new MysqlDashboardStore({ client: pool, tablePrefixe: tablePrefix } as never),
      'tablePrefixe',
      'tablePrefix',
    ],
    [
      'drizzleMysqlStores',
      () => drizzleMysqlStores(drizzleMysql(pool), { tablePrefix, changeRetention: 60_000 } as never),
      'changeRetention',
      'changeRetentionMs',
    ],
    ['keygateMysqlTables', () => keygateMysqlTables({ prefix: tablePrefix } as never), 'prefix', null],
    ['keygateMysqlMigrationSql', () => keygateMysqlMigrationSql({ tablePrefix, aftr: 0 } as never), 'aftr', 'after'],
  ];
  it.each(rows)('%s: refused, naming the nearest option', (_name, make, field, near) => {
    expectRefused(make, field, near);
  });
  it('took no connection and created no table', async () => {
    for (const [, make] of rows) expect(make).toThrow(InvalidInputError);
    const inner = (pool as unknown as { pool: { _allConnections: { length: number } } }).pool;
    expect(inner._allConnections.length).toBe(0);
    const [tables] = await pool.query('SELECT table_name FROM information_schema.tables WHERE table_name LIKE ?', [
      `${tablePrefix}%`,
    ]);
    expect(tables).toEqual([]);
  });
});

describe('SQLite classes refuse an unknown option before touching the file', () => {
  const database = new Database(':memory:');
  afterAll(() => database.close());
  const rows: Row[] = [
    [
      'SqliteKeyStore',
      () => new SqliteKeyStore({ database, busyTimeout: 100 } as never),
      'busyTimeout',
      'busyTimeoutMs',
    ],
    [
      'SqliteKeyStore',
      () => new SqliteKeyStore({ database, changeRetentionMS: 60_000 } as never),
      'changeRetentionMS',
      'changeRetentionMs',
    ],
    ['SqliteRateLimiter', () => new SqliteRateLimiter({ database, timeout: 100 } as never), 'timeout', 'timeoutMs'],
    ['SqliteCreditLedger', () => new SqliteCreditLedger({ database, timeotMs: 100 } as never), 'timeotMs', 'timeoutMs'],
    [
      'SqliteDashboardStore',
      () => new SqliteDashboardStore({ database, busyTimeoutMS: 100 } as never),
      'busyTimeoutMS',
      'busyTimeoutMs',
    ],
    [
      'SqliteAuditLog',
      () => new SqliteAuditLog({ database, busytimeoutms: 100, x: 1 } as never),
      'busytimeoutms',
      'busyTimeoutMs',
    ],
    ['SqliteOutbox', () => new SqliteOutbox({ database, busyTimeout: 5 } as never), 'busyTimeout', 'busyTimeoutMs'],
    [
      'drizzleSqliteStores',
      () => drizzleSqliteStores(drizzleSqlite(database), { pollInterval: 100 } as never),
      'pollInterval',
      'pollIntervalMs',
    ],
    ['keygateSqliteMigrationSql', () => keygateSqliteMigrationSql({ afer: 0 } as never), 'afer', 'after'],
  ];
  it.each(rows)('%s: refused, naming the nearest option', (_name, make, field, near) => {
    expectRefused(make, field, near);
  });
  it('a misspelt required option is refused as the missing option it is', () => {
    expect(() => new SqliteOutbox({ databse: database } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'database' }),
    );
  });
  it('created no table', () => {
    for (const [, make] of rows) expect(make).toThrow(InvalidInputError);
    expect(database.prepare('SELECT name FROM sqlite_master').all()).toEqual([]);
  });
});

describe.skipIf(!redisUp)('Redis classes refuse an unknown option before writing a key', () => {
  const prefix = `unknown:${RUN_ID}:`;
  const client = createClient({ url: REDIS_URL });
  const connected = client.connect();
  afterAll(async () => {
    await connected;
    await client.quit();
  });
  const rows: Row[] = [
    ['RedisKeyStore', () => new RedisKeyStore({ client, prefix, onErorr: () => {} } as never), 'onErorr', 'onError'],
    ['RedisKeyStore', () => new RedisKeyStore({ client, prefixe: prefix } as never), 'prefixe', 'prefix'],
    ['RedisRateLimiter', () => new RedisRateLimiter({ client, prefix, timeout: 100 } as never), 'timeout', 'timeoutMs'],
    ['RedisCreditLedger', () => new RedisCreditLedger({ client, prefx: prefix } as never), 'prefx', 'prefix'],
    ['RedisDashboardStore', () => new RedisDashboardStore({ client, Prefix: prefix } as never), 'Prefix', 'prefix'],
    ['RedisAttemptCounter', () => new RedisAttemptCounter({ client, prefixes: prefix } as never), 'prefixes', 'prefix'],
  ];
  it.each(rows)('%s: refused, naming the nearest option', (_name, make, field, near) => {
    expectRefused(make, field, near);
  });
  it('wrote no key', async () => {
    await connected;
    for (const [, make] of rows) expect(make).toThrow(InvalidInputError);
    expect(await client.keys(`${prefix}*`)).toEqual([]);
    expect(await client.keys('keygate:*unknown*')).toEqual([]);
  });
});

describe('Cloudflare classes refuse an unknown option before touching D1 or KV', () => {
  const pool = new MiniflarePool(1);
  afterAll(() => pool.dispose());
  // The limiter and ledger only keep the namespace until their first call.
  const namespace = { idFromName: () => ({}), get: () => ({ fetch: async () => new Response() }) } as never;
  it('D1KeyStore, D1DashboardStore, D1AuditLog: refused, and no table or KV entry made', async () => {
    const { db } = await pool.take();
    const kvCalls: string[] = [];
    const watched = (name: string) => () => {
      kvCalls.push(name);
      throw new Error(`KV ${name} called at construction`);
    };
    const kv: KVLike = { get: watched('get'), put: watched('put'), delete: watched('delete') };
    expectRefused(() => new D1KeyStore({ db, cache: kv, maxStale: 1000 } as never), 'maxStale', 'maxStaleMs');
    expectRefused(() => new D1KeyStore({ db, kvCache: kv } as never), 'kvCache', 'cache');
    expectRefused(() => new D1DashboardStore({ db, d: 1 } as never), 'd', 'db');
    expectRefused(() => new D1AuditLog({ db, dbs: db } as never), 'dbs', 'db');
    const tables = await db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'keygate%'").all();
    expect(tables.results).toEqual([]);
    expect(kvCalls).toEqual([]);
  });
  it.each<Row>([
    [
      'DurableObjectRateLimiter',
      () => new DurableObjectRateLimiter({ namespace, timeout: 100 } as never),
      'timeout',
      'timeoutMs',
    ],
    [
      'DurableObjectCreditLedger',
      () => new DurableObjectCreditLedger({ namespace, timeoutMS: 100 } as never),
      'timeoutMS',
      'timeoutMs',
    ],
  ])('%s: refused, naming the nearest option', (_name, make, field, near) => {
    expectRefused(make, field, near);
  });
});

describe('the dashboard and telemetry options refuse an unknown member', () => {
  const manager = new KeyManager({ store: new MemoryKeyStore() });
  const secret = 'x'.repeat(32);
  it.each<Row>([
    ['dashboard', () => dashboard({ manager, secret, basepath: '/dashboard' } as never), 'basepath', 'basePath'],
    ['dashboard', () => dashboard({ manager, secret, sessionIdle: 1000 } as never), 'sessionIdle', 'sessionIdleMs'],
    ['globalTelemetry', () => globalTelemetry({ keyID: true } as never), 'attributes.keyID', 'keyId'],
    [
      'telemetry',
      () =>
        new CachedKeyStore(new MemoryKeyStore(), { ttlMs: 1000, telemetry: { meter: undefined, tracr: {} } } as never),
      'telemetry.tracr',
      'tracer',
    ],
    [
      'telemetry.attributes',
      () =>
        new CachedKeyStore(new MemoryKeyStore(), { ttlMs: 1000, telemetry: { attributes: { adress: true } } } as never),
      'telemetry.attributes.adress',
      'address',
    ],
  ])('%s: refused, naming the nearest option', (_name, make, field, near) => {
    expectRefused(make, field, near);
  });
});
