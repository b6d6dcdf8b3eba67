// Where keys and credits live: both in one database (PGlite or PostgreSQL), or both in memory; and
// where rate limits are counted: in PostgreSQL when several instances may share it, else in memory.
import { MemoryCreditLedger, MemoryKeyStore, MemoryRateLimiter } from 'keygate';
import { MemoryDashboardStore } from 'keygate/dashboard';
import { databaseProblem } from './database-url.js';
import { createPrivateFolder, restrictFolder } from './private-folder.js';

/**
 * @typedef {object} Stores
 * @property {import('keygate').WritableKeyStore} store keygate's keys
 * @property {import('keygate/dashboard').DashboardStore} dashboardStore what the dashboard reads and keeps, beside the keys
 * @property {import('keygate').CreditLedger} ledger the accounts' prepaid credits (keygate's `keygate_credit_*` tables), beside the keys
 * @property {import('keygate').RateLimiter} limiter counts each key's rate limit: exact across every instance that shares it
 * @property {string} describe where they live, for the start-up message
 * @property {string | null} cliStore the `--store` value that lets the keygate CLI reach the same keys
 * @property {() => Promise<void>} close releases connections
 */

/**
 * Opens the stores: `memory` (lost at exit), `databaseUrl` (PostgreSQL), or else PGlite in `dataDir`.
 * Tables are created or upgraded, idempotently. Rate limits are counted in PostgreSQL (one statement
 * per request) when the keys are there, since several instances may serve them; otherwise in memory,
 * which is exact for the one process a memory store or a locked PGlite folder allows. Drivers load only when chosen. The PGlite folder is
 * owner-only (0700) before PGlite writes there, and every file in it is 0600 once it is open.
 *
 * @param {{ memory?: boolean, databaseUrl?: string, dataDir: string }} where
 * @returns {Promise<Stores>}
 * @example
 * const { store, dashboardStore, ledger, close } = await openStores({ dataDir: './.keygate' });
 */
export async function openStores({ memory, databaseUrl, dataDir }) {
  if (memory) {
    const store = new MemoryKeyStore();
    return {
      store,
      dashboardStore: new MemoryDashboardStore(store),
      ledger: new MemoryCreditLedger(),
      limiter: new MemoryRateLimiter(),
      describe: 'in memory, lost at exit',
      cliStore: null,
      close: async () => {},
    };
  }
  const { PostgresCreditLedger, PostgresDashboardStore, PostgresKeyStore, PostgresRateLimiter, openPGliteFolder } =
    await import('keygate/postgres');
  /** @type {import('pg').Pool | import('@electric-sql/pglite').PGlite} */
  let client;
  let describe;
  /** @type {import('keygate/postgres').PostgresKeyStore} */
  let store;
  /** @type {() => Promise<void>} */
  let closeStore;
  /** @type {import('keygate').RateLimiter} */
  let limiter = new MemoryRateLimiter();
  if (databaseUrl) {
    const pg = await import('pg');
    const pool = new (pg.default ?? pg).Pool({ connectionString: databaseUrl });
    // An idle connection the server drops (a restart, a failover) is reported here; without a listener
    // pg would throw it as an uncaught exception. The pool opens a new connection on the next query.
    pool.on('error', (err) => console.error(`PostgreSQL: idle connection lost (${err.message})`));
    client = pool;
    describe = 'in PostgreSQL (DATABASE_URL)';
    store = new PostgresKeyStore({ client });
    limiter = new PostgresRateLimiter({ client: pool });
    closeStore = async () => {
      store.close();
      await pool.end();
    };
  } else {
    await createPrivateFolder(dataDir); // owner-only before PGlite writes anything in it
    // The folder is locked for this process: a second process on it (another server, the CLI) is
    // refused with StoreLockedError instead of silently losing its writes.
    const folder = await openPGliteFolder(dataDir);
    ({ client, store } = folder);
    describe = `in PGlite at ${dataDir}`;
    closeStore = folder.close;
  }
  const ledger = new PostgresCreditLedger({ client });
  const dashboardStore = new PostgresDashboardStore({ client });
  try {
    await store.migrate();
    await dashboardStore.migrate();
    await ledger.migrate();
    if (limiter instanceof PostgresRateLimiter) await limiter.migrate();
    if (!databaseUrl) await restrictFolder(dataDir); // PGlite unpacks its first files as 0666
  } catch (err) {
    await closeStore();
    // The first queries are where a wrong DATABASE_URL shows: one line naming it and the fix.
    throw databaseUrl ? databaseProblem(databaseUrl, err) : err;
  }
  return {
    store,
    dashboardStore,
    ledger,
    limiter,
    describe,
    cliStore: databaseUrl ? '"$DATABASE_URL"' : `pglite:${dataDir}`,
    close: closeStore,
  };
}
