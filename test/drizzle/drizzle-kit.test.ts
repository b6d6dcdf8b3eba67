// drizzle-kit, run as a team runs it (generate, generate --custom, migrate) on a schema file that
// exports keygate's tables beside the application's own, builds the same tables, indexes, checks,
// triggers and functions as the keygate classes' own migrate(), on PGlite and on PostgreSQL; and those
// classes, given the result, find nothing left to migrate.
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { eq } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePGlite } from 'drizzle-orm/pglite';
import { migrate as migratePGlite } from 'drizzle-orm/pglite/migrator';
import { KeyManager } from 'keygate';
import { drizzlePgStores, keygatePgTables } from 'keygate/drizzle';
import { PostgresCreditLedger, PostgresKeyStore, PostgresRateLimiter } from 'keygate/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { catalogOf, type Query } from './support/catalog.js';
import { DrizzleProject } from './support/drizzle-kit.js';

const available = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');

/** What every keygate class that owns tables creates, through its own migrate(). */
async function migrateTheKeygateWay(client: pg.Pool | PGlite, schema: string) {
  return {
    keys: await new PostgresKeyStore({ client, schema }).migrate(),
    limiter: await new PostgresRateLimiter({ client, schema }).migrate(),
    ledger: await new PostgresCreditLedger({ client, schema }).migrate(),
  };
}

const APPEND_ONLY = /keygate: the audit log is append-only; (UPDATE|DELETE|TRUNCATE) on keygate_audit is refused/;
const REVOKED_IS_FINAL = /keygate: key \S+ is revoked and can no longer be changed/;

async function refusal(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
    return 'ran';
  } catch (err) {
    return String((err as Error).message ?? err);
  }
}

/** Writes through the stores of a drizzled database, then checks the triggers the custom migration added. */
async function triggersHold(query: Query, schema: string, db: Parameters<typeof drizzlePgStores>[0]): Promise<void> {
  const { keys, audit } = drizzlePgStores(db, { schema });
  const manager = new KeyManager({ store: keys });
  const { key } = await manager.create({ accountId: `acct_dk_${RUN_ID}`, name: 'ci', mode: 'test' });
  await manager.revoke(key.id);
  const s = `"${schema}"`;
  expect(await refusal(() => query(`UPDATE ${s}.keygate_keys SET name = 'x' WHERE id = $1`, [key.id]))).toMatch(
    REVOKED_IS_FINAL,
  );
  const [entry] = await audit.list({ accountId: key.accountId });
  expect(entry?.action).toBe('key.revoked');
  for (const statement of [
    `UPDATE ${s}.keygate_audit SET action = 'key.created' WHERE id = $1`,
    `DELETE FROM ${s}.keygate_audit WHERE id = $1`,
    `TRUNCATE ${s}.keygate_audit`,
  ]) {
    expect(await refusal(() => query(statement, statement.includes('$1') ? [entry?.id] : []))).toMatch(APPEND_ONLY);
  }
  keys.close();
}

describe('drizzle-kit over PGlite, keygate in public', () => {
  const project = new DrizzleProject(undefined, undefined, { pglite: './db' });
  let drizzled: PGlite | undefined;
  let reference: PGlite | undefined;
  let files: string[] = [];

  beforeAll(async () => {
    files = await project.generateAndMigrate();
    drizzled = await PGlite.create(join(project.dir, 'db'));
    reference = await PGlite.create();
    await migrateTheKeygateWay(reference, 'public');
  }, 120_000);

  afterAll(async () => {
    await drizzled?.close();
    await reference?.close();
    project.remove();
  });

  it('makes one migration for the tables and one custom migration for the rest', () => {
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^0000_\w+\.sql$/);
    expect(files[1]).toBe('0001_keygate.sql');
  });

  it("gives the same tables, columns, defaults, checks, indexes, triggers, functions and versions as keygate's migrate()", async () => {
    const made = await catalogOf((text, params) => drizzled!.query(text, params), 'public');
    expect(made).toEqual(await catalogOf((text, params) => reference!.query(text, params), 'public'));
    expect(made.versions).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(made.tables).toHaveLength(14);
    expect(made.columns).toHaveLength(97);
    expect(made.indexes).toHaveLength(31);
    expect(made.triggers).toHaveLength(4);
    expect(made.functions).toHaveLength(7);
    expect(made.sequences).toHaveLength(1);
  });

  it("leaves keygate's own migrate() nothing to do, and the catalog as it was", async () => {
    const query: Query = (text, params) => drizzled!.query(text, params);
    const before = await catalogOf(query, 'public');
    expect((await migrateTheKeygateWay(drizzled!, 'public')).keys).toEqual({ applied: [] });
    expect(await catalogOf(query, 'public')).toEqual(before);
  });

  it('keeps a revoked key final and the audit log append-only', async () => {
    await triggersHold((text, params) => drizzled!.query(text, params), 'public', drizzlePGlite(drizzled!));
  });

  it("gives the same catalog when drizzle-orm's migrator applies the folder at start-up instead of the CLI", async () => {
    const fresh = await PGlite.create();
    try {
      await migratePGlite(drizzlePGlite(fresh), { migrationsFolder: join(project.dir, 'drizzle') });
      expect(await catalogOf((text, params) => fresh.query(text, params), 'public')).toEqual(
        await catalogOf((text, params) => reference!.query(text, params), 'public'),
      );
    } finally {
      await fresh.close();
    }
  });

  it("joins the application's table to keygate's keys with Drizzle's query builder", async () => {
    const db = drizzlePGlite(drizzled!);
    const { keygateKeys } = keygatePgTables();
    const { key } = await new KeyManager({ store: drizzlePgStores(db).keys }).create({
      accountId: 'acct_join',
      name: 'deploy',
      mode: 'live',
    });
    await drizzled!.query('INSERT INTO widgets (id, owner_key_id) VALUES ($1, $2)', ['w1', key.id]);
    const widgets = pgTable('widgets', {
      id: text('id').primaryKey(),
      ownerKeyId: text('owner_key_id').notNull(),
    });
    const rows = await db
      .select({ widget: widgets.id, keyName: keygateKeys.name, status: keygateKeys.status })
      .from(widgets)
      .innerJoin(keygateKeys, eq(keygateKeys.id, widgets.ownerKeyId));
    expect(rows).toEqual([{ widget: 'w1', keyName: 'deploy', status: 'active' }]);
  });
});

describe.skipIf(!available)('drizzle-kit over PostgreSQL, keygate in its own schema', () => {
  const schema = `keygate_dz${RUN_ID}`;
  const appSchema = `keygate_dza${RUN_ID}`;
  const journalSchema = `keygate_dzj${RUN_ID}`;
  const referenceSchema = `keygate_dzr${RUN_ID}`;
  const project = new DrizzleProject(schema, appSchema, { url: PG_URL, journalSchema });
  const pool = new pg.Pool({ connectionString: PG_URL, max: 5 });
  pool.on('error', () => {});
  const query: Query = (text, params) => pool.query(text, params);

  beforeAll(async () => {
    await project.generateAndMigrate();
    await migrateTheKeygateWay(pool, referenceSchema);
  }, 120_000);

  afterAll(async () => {
    for (const s of [schema, appSchema, journalSchema, referenceSchema]) {
      await pool.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    }
    await pool.end();
    project.remove();
  });

  it("gives the same tables, columns, defaults, checks, indexes, triggers, functions and versions as keygate's migrate()", async () => {
    const made = await catalogOf(query, schema);
    expect(made).toEqual(await catalogOf(query, referenceSchema));
    expect(made.versions).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("puts the application's table in its own schema and drizzle-kit's journal in the one configured", async () => {
    const { rows } = await pool.query(
      `SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema IN ($1, $2) ORDER BY 1, 2`,
      [appSchema, journalSchema],
    );
    expect(rows).toEqual([
      { table_schema: appSchema, table_name: 'widgets' },
      { table_schema: journalSchema, table_name: '__drizzle_migrations' },
    ]);
  });

  it("leaves keygate's own migrate() nothing to do, and the catalog as it was", async () => {
    const before = await catalogOf(query, schema);
    expect((await migrateTheKeygateWay(pool, schema)).keys).toEqual({ applied: [] });
    expect(await catalogOf(query, schema)).toEqual(before);
  });

  it('keeps a revoked key final and the audit log append-only', async () => {
    await triggersHold(query, schema, drizzlePg(pool));
  });

  it("reads keygate's keys with Drizzle from the pgSchema the tables carry", async () => {
    const db = drizzlePg(pool);
    const tables = keygatePgTables({ schema });
    expect(tables.keygateSchema?.schemaName).toBe(schema);
    const { key } = await new KeyManager({ store: drizzlePgStores(db, { schema }).keys }).create({
      accountId: `acct_read_${RUN_ID}`,
      name: 'reader',
      mode: 'test',
    });
    const rows = await db
      .select({ id: tables.keygateKeys.id, version: tables.keygateKeys.version })
      .from(tables.keygateKeys)
      .where(eq(tables.keygateKeys.accountId, key.accountId));
    expect(rows).toEqual([{ id: key.id, version: 1 }]);
  });
});
