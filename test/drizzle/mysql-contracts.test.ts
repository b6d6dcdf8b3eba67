// Every keygate/testing contract on the stores drizzleMysqlStores builds over drizzle-orm/mysql2 dbs
// (two pools, as two processes) on MariaDB, in tables made the Drizzle way: drizzle-kit's generator
// and keygate's custom migration, never migrate(). A fresh table prefix per fixture, in one database
// created for the run (with the server's default collation) and dropped after.
import { drizzle } from 'drizzle-orm/mysql2';
import { drizzleMysqlStores } from 'keygate/drizzle';
import mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mysqlAvailable } from '../stores/support/mysql.js';
import { describeStoreContracts } from './support/contracts.js';
import { freshMysqlDatabase, mysqlStatementsOfDrizzleKit } from './support/mysql.js';

const available = await mysqlAvailable();
let database: Awaited<ReturnType<typeof freshMysqlDatabase>> | undefined;
let pools: [mysql.Pool, mysql.Pool] | undefined;
let prefixes = 0;

afterAll(async () => {
  if (pools) await Promise.all(pools.map((p) => p.end().catch(() => {})));
  await database?.drop();
});

describe.skipIf(!available)('over MariaDB', () => {
  describeStoreContracts(
    'drizzleMysqlStores over drizzle-orm/mysql2',
    async () => {
      database ??= await freshMysqlDatabase('c');
      const url = database.url;
      pools ??= [
        mysql.createPool({ uri: url, connectionLimit: 10 }),
        mysql.createPool({ uri: url, connectionLimit: 10 }),
      ];
      const tablePrefix = `k${++prefixes}_`;
      for (const statement of await mysqlStatementsOfDrizzleKit(tablePrefix)) await pools[0].query(statement);
      const options = { tablePrefix, pollIntervalMs: 50, rateLimiterTimeoutMs: 10_000, creditLedgerTimeoutMs: 10_000 };
      return {
        here: drizzleMysqlStores(drizzle(pools[0]), options),
        there: drizzleMysqlStores(drizzle(pools[1]), options),
      };
    },
    { describe, it, expect, beforeEach, afterEach },
  );
});
