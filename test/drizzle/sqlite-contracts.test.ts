// Every keygate/testing contract on the stores drizzleSqliteStores builds over drizzle-orm/better-sqlite3
// dbs (two connections to one file, as two processes), in tables made the Drizzle way: drizzle-kit's
// generator and keygate's custom migration, never migrate(). A fresh file per fixture, removed after.
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { drizzleSqliteStores } from 'keygate/drizzle';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteFiles } from '../stores/support/sqlite-files.js';
import { describeStoreContracts } from './support/contracts.js';
import { sqliteStatementsOfDrizzleKit } from './support/sqlite.js';

const files = new SqliteFiles();
afterAll(() => files.removeAll());

let statements: Promise<string[]> | undefined;

describeStoreContracts(
  'drizzleSqliteStores over drizzle-orm/better-sqlite3',
  async () => {
    statements ??= sqliteStatementsOfDrizzleKit();
    const path = files.path();
    const db = drizzle(files.connect(path));
    for (const statement of await statements) db.$client.exec(statement);
    const options = { pollIntervalMs: 50, rateLimiterTimeoutMs: 10_000, creditLedgerTimeoutMs: 10_000 };
    return {
      here: drizzleSqliteStores(db, options),
      there: drizzleSqliteStores(drizzle(files.connect(path)), options),
    };
  },
  { describe, it, expect, beforeEach, afterEach },
);
