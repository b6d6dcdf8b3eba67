// The dashboard's store over SQLite, proven by the contract suite of keygate/testing: a file per
// test, the dashboard store and its peer on two connections.
import { SqliteDashboardStore, SqliteKeyStore } from 'keygate/sqlite';
import { describeDashboardStoreContract } from 'keygate/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteFiles } from './support/sqlite-files.js';

const files = new SqliteFiles();
afterAll(() => files.removeAll());

describeDashboardStoreContract(
  'SqliteDashboardStore over better-sqlite3 (a file, two connections)',
  async () => {
    const path = files.path();
    const store = new SqliteDashboardStore({ database: files.connect(path) });
    await store.migrate(); // the key store's tables too: one migration history for both
    const keys = new SqliteKeyStore({ database: files.connect(path) });
    return {
      keys,
      store,
      peer: new SqliteDashboardStore({ database: files.connect(path) }),
      close: async () => keys.close(),
    };
  },
  { describe, it, expect, beforeEach, afterEach },
);

describe('SqliteDashboardStore', () => {
  it('shares one migration history with the key store, in either order', async () => {
    const path = files.path();
    expect(await new SqliteDashboardStore({ database: files.connect(path) }).migrate()).toEqual({ applied: [1, 2] });
    expect(await new SqliteKeyStore({ database: files.connect(path) }).migrate()).toEqual({ applied: [] });
  });
});
