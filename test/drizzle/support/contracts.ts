import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import { sql } from 'drizzle-orm';
import { drizzlePgStores, keygatePgMigrationSql, keygatePgTables } from 'keygate/drizzle';
import {
  type ContractTestApi,
  describeAuditLogContract,
  describeCreditLedgerContract,
  describeDashboardStoreContract,
  describeKeyStoreContract,
  describeOutboxContract,
  describeRateLimiterContract,
} from 'keygate/testing';

/** A Drizzle PostgreSQL database, whichever driver made it. */
export type Db = Parameters<typeof drizzlePgStores>[0] & {
  execute(query: ReturnType<typeof sql.raw>): Promise<unknown>;
};

/**
 * Creates keygate's tables in `schema` the Drizzle way: the statements drizzle-kit's generator makes
 * from `keygatePgTables` (what `drizzle-kit generate` writes), then the custom migration of
 * `keygatePgMigrationSql`, run through the Drizzle db as its migrator would.
 */
export async function createWithDrizzleKit(db: Db, schema: string): Promise<void> {
  const statements = await generateMigration(generateDrizzleJson({}), generateDrizzleJson(keygatePgTables({ schema })));
  const custom = keygatePgMigrationSql({ schema }).split('--> statement-breakpoint');
  for (const statement of [...statements, ...custom]) await db.execute(sql.raw(statement));
}

/** Two Drizzle dbs over one database (as two processes hold it), and a schema for one fixture. */
export interface Databases {
  db: Db;
  peerDb: Db;
  schema: string;
}

/**
 * Every contract suite of keygate/testing, on the stores `drizzlePgStores` builds over `open()`'s
 * databases: each fixture gets a fresh schema made by {@link createWithDrizzleKit}, never by migrate().
 */
export function describeDrizzleContracts(name: string, open: () => Promise<Databases>, t: ContractTestApi): void {
  const fresh = async () => {
    const databases = await open();
    await createWithDrizzleKit(databases.db, databases.schema);
    const options = { schema: databases.schema, rateLimiterTimeoutMs: 10_000, creditLedgerTimeoutMs: 10_000 };
    return { here: drizzlePgStores(databases.db, options), there: drizzlePgStores(databases.peerDb, options) };
  };
  const closing =
    (...stores: { keys: { close(): void } }[]) =>
    async () => {
      for (const s of stores) s.keys.close();
    };

  describeKeyStoreContract(
    `drizzlePgStores over ${name}`,
    async () => {
      const { here, there } = await fresh();
      return { store: here.keys, peer: there.keys, close: closing(here, there) };
    },
    t,
    { channel: true },
  );
  describeRateLimiterContract(
    `drizzlePgStores over ${name}`,
    async () => ({ limiter: (await fresh()).here.rateLimiter }),
    t,
  );
  describeCreditLedgerContract(
    `drizzlePgStores over ${name}`,
    async () => {
      const { here, there } = await fresh();
      return { ledger: here.credits, peer: there.credits };
    },
    t,
  );
  describeDashboardStoreContract(
    `drizzlePgStores over ${name}`,
    async () => {
      const { here, there } = await fresh();
      return { keys: here.keys, store: here.dashboard, peer: there.dashboard, close: closing(here, there) };
    },
    t,
  );
  describeAuditLogContract(
    `drizzlePgStores over ${name}`,
    async () => {
      const { here, there } = await fresh();
      return { log: here.audit, peer: there.audit };
    },
    t,
  );
  describeOutboxContract(
    `drizzlePgStores over ${name}`,
    async () => {
      const { here, there } = await fresh();
      return { outbox: here.outbox, peer: there.outbox };
    },
    t,
  );
}
