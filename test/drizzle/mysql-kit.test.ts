// drizzle-kit, run as a team runs it (generate, generate --custom, migrate) on a schema file that
// exports keygate's MySQL tables beside the application's own, builds the same columns, collations,
// indexes, checks and triggers in MariaDB as the keygate/mysql classes' own migrate(); and those
// classes, given the result, find nothing left to migrate.
import { eq } from 'drizzle-orm';
import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import { migrate } from 'drizzle-orm/mysql2/migrator';
import { KeyManager } from 'keygate';
import { drizzleMysqlStores, keygateMysqlTables } from 'keygate/drizzle';
import { MysqlCreditLedger, MysqlKeyStore, MysqlRateLimiter } from 'keygate/mysql';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlAvailable } from '../stores/support/mysql.js';
import { freshMysqlDatabase, MysqlDrizzleProject, mysqlCatalogOf } from './support/mysql.js';

const available = await mysqlAvailable();

/** What every keygate/mysql class that owns tables creates, through its own migrate(). */
async function migrateTheKeygateWay(client: mysql.Pool) {
  return {
    keys: await new MysqlKeyStore({ client }).migrate(),
    limiter: await new MysqlRateLimiter({ client }).migrate(),
    ledger: await new MysqlCreditLedger({ client }).migrate(),
  };
}

async function refusal(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
    return 'ran';
  } catch (err) {
    return String((err as Error).message ?? err);
  }
}

type Catalog = Awaited<ReturnType<typeof mysqlCatalogOf>>;
const comparable = ({ tableCollations: _, ...rest }: Catalog) => rest;

describe.skipIf(!available)('drizzle-kit over MariaDB', () => {
  const databases: Awaited<ReturnType<typeof freshMysqlDatabase>>[] = [];
  const pools: mysql.Pool[] = [];
  let project: MysqlDrizzleProject | undefined;
  let drizzled: mysql.Pool;
  let reference: mysql.Pool;
  let files: string[] = [];
  const open = async (label: string) => {
    const database = await freshMysqlDatabase(label);
    databases.push(database);
    const pool = mysql.createPool({ uri: database.url, connectionLimit: 5 });
    pools.push(pool);
    return { database, pool };
  };

  beforeAll(async () => {
    const made = await open('k');
    drizzled = made.pool;
    project = new MysqlDrizzleProject(made.database.url);
    files = await project.generateAndMigrate();
    reference = (await open('r')).pool;
    await migrateTheKeygateWay(reference);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end().catch(() => {})));
    for (const d of databases) await d.drop();
    project?.remove();
  });

  const catalog = async (pool: mysql.Pool) => {
    const [[{ db }]] = (await pool.query('SELECT DATABASE() AS db')) as unknown as [[{ db: string }]];
    return mysqlCatalogOf(pool, db);
  };

  it('makes one migration for the tables and one custom migration for the rest', () => {
    expect(files).toHaveLength(2);
    expect(files[1]).toBe('0001_keygate.sql');
  });

  it("gives the same columns, collations, indexes, checks, triggers and versions as keygate's migrate()", async () => {
    const made = await catalog(drizzled);
    const expected = await catalog(reference);
    expect(comparable(made)).toEqual(comparable(expected));
    expect(made.versions).toEqual([1, 2]);
    expect(made.counter).toEqual([{ id: 1, seq: 0 }]);
    expect(made.tables).toHaveLength(16);
    expect(made.triggers.map((t) => t.TRIGGER_NAME)).toEqual([
      'keygate_audit_no_delete',
      'keygate_audit_no_update',
      'keygate_keys_revoked_is_final',
    ]);
    expect(new Set(made.columns.map((c) => c.COLLATION_NAME))).toEqual(new Set([null, 'utf8mb4_bin']));
    expect(new Set(Object.values(expected.tableCollations))).toEqual(new Set(['utf8mb4_bin']));
  });

  it("leaves keygate's own migrate() nothing to do, and the catalog as it was", async () => {
    const before = await catalog(drizzled);
    expect((await migrateTheKeygateWay(drizzled)).keys).toEqual({ applied: [] });
    expect(await catalog(drizzled)).toEqual(before);
  });

  it('keeps a revoked key final and the audit log append-only', async () => {
    const { keys, audit } = drizzleMysqlStores(drizzle(drizzled));
    const manager = new KeyManager({ store: keys });
    const { key } = await manager.create({ accountId: 'acct_triggers', name: 'ci', mode: 'test' });
    await manager.revoke(key.id);
    expect(await refusal(() => drizzled.query(`UPDATE keygate_keys SET name = 'x' WHERE id = ?`, [key.id]))).toMatch(
      /keygate: a revoked key can no longer be changed/,
    );
    const [entry] = await audit.list({ accountId: key.accountId });
    expect(entry?.action).toBe('key.revoked');
    expect(
      await refusal(() => drizzled.query(`UPDATE keygate_audit SET action = 'x' WHERE id = ?`, [entry?.id])),
    ).toMatch(/append-only; UPDATE on keygate_audit is refused/);
    expect(await refusal(() => drizzled.query('DELETE FROM keygate_audit WHERE id = ?', [entry?.id]))).toMatch(
      /append-only; DELETE on keygate_audit is refused/,
    );
    keys.close();
  });

  it('compares ids byte by byte in a database whose default collation is not binary', async () => {
    const { keygateKeys } = keygateMysqlTables();
    const { keys } = drizzleMysqlStores(drizzle(drizzled));
    const { key } = await new KeyManager({ store: keys }).create({ accountId: 'acct_Case', name: 'c', mode: 'test' });
    const db = drizzle(drizzled);
    const lower = await db
      .select({ id: keygateKeys.id })
      .from(keygateKeys)
      .where(eq(keygateKeys.accountId, 'acct_case'));
    const exact = await db
      .select({ id: keygateKeys.id })
      .from(keygateKeys)
      .where(eq(keygateKeys.accountId, 'acct_Case'));
    expect([lower, exact]).toEqual([[], [{ id: key.id }]]);
    keys.close();
  });

  it("gives the same catalog when drizzle-orm's migrator applies the folder at start-up instead of the CLI", async () => {
    const { pool } = await open('m');
    await migrate(drizzle(pool), { migrationsFolder: `${project!.dir}/drizzle` });
    expect(comparable(await catalog(pool))).toEqual(comparable(await catalog(reference)));
  });

  it("joins the application's table to keygate's keys with Drizzle's query builder", async () => {
    const db = drizzle(drizzled);
    const { keygateKeys } = keygateMysqlTables();
    const { keys } = drizzleMysqlStores(db);
    const { key } = await new KeyManager({ store: keys }).create({
      accountId: 'acct_join',
      name: 'deploy',
      mode: 'live',
    });
    await drizzled.query('INSERT INTO widgets (id, owner_key_id) VALUES (?, ?)', ['w1', key.id]);
    const widgets = mysqlTable('widgets', {
      id: varchar('id', { length: 64 }).primaryKey(),
      ownerKeyId: varchar('owner_key_id', { length: 255 }).notNull(),
    });
    const rows = await db
      .select({ widget: widgets.id, keyName: keygateKeys.name, status: keygateKeys.status })
      .from(widgets)
      .innerJoin(keygateKeys, eq(keygateKeys.id, widgets.ownerKeyId));
    expect(rows).toEqual([{ widget: 'w1', keyName: 'deploy', status: 'active' }]);
    keys.close();
  });
});
