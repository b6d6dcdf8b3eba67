// The dashboard's own store on MariaDB, proven by the contract suite of keygate/testing.
import { MysqlDashboardStore, MysqlKeyStore } from 'keygate/mysql';
import { describeDashboardStoreContract } from 'keygate/testing';
import type mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mysqlAvailable, openTestDatabase, type TestDatabase } from './support/mysql.js';

const available = await mysqlAvailable();
let db: TestDatabase;
let pools: [mysql.Pool, mysql.Pool];
let n = 0;

beforeAll(async () => {
  if (!available) return;
  db = await openTestDatabase('ds');
  pools = [db.pool({ connectionLimit: 4 }), db.pool({ connectionLimit: 4 })];
});
afterAll(async () => {
  await db?.drop();
});

describe.skipIf(!available)('on MariaDB', () => {
  describeDashboardStoreContract(
    'MysqlDashboardStore over a mysql2 pool',
    async () => {
      const [a, b] = pools;
      const tablePrefix = `d${++n}_`;
      const keys = new MysqlKeyStore({ client: a, tablePrefix });
      await keys.migrate();
      const store = new MysqlDashboardStore({ client: a, tablePrefix });
      expect(await store.migrate()).toEqual({ applied: [] }); // the key store's migrations were the same ones
      return {
        keys,
        store,
        peer: new MysqlDashboardStore({ client: b, tablePrefix }),
        close: async () => keys.close(),
      };
    },
    { describe, it, expect, beforeEach, afterEach },
  );

  it('refuses a bad tablePrefix at construction', () => {
    expect(() => new MysqlDashboardStore({ client: pools[0], tablePrefix: 'a-b' })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'tablePrefix' }),
    );
  });
});
