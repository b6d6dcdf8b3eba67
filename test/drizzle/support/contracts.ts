import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import { sql } from 'drizzle-orm';
import { drizzlePgStores, keygatePgMigrationSql, keygatePgTables } from 'keygate/drizzle';
import {
  type AuditLogFixture,
  type ContractTestApi,
  type CreditLedgerFixture,
  type DashboardStoreFixture,
  describeAuditLogContract,
  describeCreditLedgerContract,
  describeDashboardStoreContract,
  describeKeyStoreContract,
  describeOutboxContract,
  describeRateLimiterContract,
  type LimiterFixture,
  type OutboxFixture,
  type StoreFixture,
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
  describeStoreContracts(`drizzlePgStores over ${name}`, fresh, t);
}

/** What the `drizzle*Stores` functions of every dialect return, as the contract suites use it. */
export interface Stores {
  keys: StoreFixture['store'] & DashboardStoreFixture['keys'] & { close(): void };
  rateLimiter: LimiterFixture['limiter'];
  credits: CreditLedgerFixture['ledger'];
  dashboard: DashboardStoreFixture['store'];
  audit: AuditLogFixture['log'];
  outbox: OutboxFixture['outbox'];
}

/**
 * Every contract suite of keygate/testing on the stores `fresh` builds: `here` and `there` are two
 * sets of stores over one fresh database, as two processes hold it.
 */
export function describeStoreContracts(
  name: string,
  fresh: () => Promise<{ here: Stores; there: Stores }>,
  t: ContractTestApi,
): void {
  const closing =
    (...stores: { keys: { close(): void } }[]) =>
    async () => {
      for (const s of stores) s.keys.close();
    };

  describeKeyStoreContract(
    name,
    async () => {
      const { here, there } = await fresh();
      return { store: here.keys, peer: there.keys, close: closing(here, there) };
    },
    t,
    { channel: true, auditedWrites: true },
  );
  describeRateLimiterContract(name, async () => ({ limiter: (await fresh()).here.rateLimiter }), t);
  describeCreditLedgerContract(
    name,
    async () => {
      const { here, there } = await fresh();
      return { ledger: here.credits, peer: there.credits };
    },
    t,
  );
  describeDashboardStoreContract(
    name,
    async () => {
      const { here, there } = await fresh();
      return { keys: here.keys, store: here.dashboard, peer: there.dashboard, close: closing(here, there) };
    },
    t,
  );
  describeAuditLogContract(
    name,
    async () => {
      const { here, there } = await fresh();
      return { log: here.audit, peer: there.audit };
    },
    t,
  );
  describeOutboxContract(
    name,
    async () => {
      const { here, there } = await fresh();
      return { outbox: here.outbox, peer: there.outbox };
    },
    t,
  );
}
