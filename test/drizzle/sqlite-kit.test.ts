// drizzle-kit, run as a team runs it (generate, generate --custom, migrate) on a schema file that
// exports keygate's SQLite tables beside the application's own, builds the same columns, checks,
// indexes and triggers as the keygate/sqlite classes' own migrate(), in a fresh file; and those
// classes, given the result, find nothing left to migrate.
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { KeyManager } from 'keygate';
import { drizzleSqliteStores, keygateSqliteTables } from 'keygate/drizzle';
import { SqliteCreditLedger, SqliteKeyStore, SqliteRateLimiter } from 'keygate/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteFiles } from '../stores/support/sqlite-files.js';
import { SqliteDrizzleProject } from './support/sqlite.js';
import { sqliteCatalogOf } from './support/sqlite-catalog.js';

type Db = InstanceType<typeof Database>;

/** What every keygate/sqlite class that owns tables creates, through its own migrate(). */
async function migrateTheKeygateWay(database: Db) {
  return {
    keys: await new SqliteKeyStore({ database }).migrate(),
    limiter: await new SqliteRateLimiter({ database }).migrate(),
    ledger: await new SqliteCreditLedger({ database }).migrate(),
  };
}

function refusal(work: () => unknown): string {
  try {
    work();
    return 'ran';
  } catch (err) {
    return String((err as Error).message ?? err);
  }
}

/** The catalogs, with the one difference drizzle-kit cannot avoid (keygate_usage WITHOUT ROWID) taken out. */
function comparable(catalog: ReturnType<typeof sqliteCatalogOf>) {
  const { withoutRowid: _, ...rest } = catalog;
  return rest;
}

describe('drizzle-kit over a SQLite file', () => {
  const files = new SqliteFiles();
  const drizzledPath = files.path();
  const project = new SqliteDrizzleProject(drizzledPath);
  let drizzled: Db;
  let reference: Db;
  let files_: string[] = [];

  beforeAll(async () => {
    files_ = await project.generateAndMigrate();
    drizzled = files.connect(drizzledPath);
    reference = files.connect(files.path());
    await migrateTheKeygateWay(reference);
  }, 120_000);

  afterAll(() => {
    files.removeAll();
    project.remove();
  });

  it('makes one migration for the tables and one custom migration for the rest', () => {
    expect(files_).toHaveLength(2);
    expect(files_[0]).toMatch(/^0000_\w+\.sql$/);
    expect(files_[1]).toBe('0001_keygate.sql');
  });

  it("gives the same columns, checks, indexes, triggers and versions as keygate's migrate(), keygate_usage keeping a rowid", () => {
    const made = sqliteCatalogOf(drizzled);
    const expected = sqliteCatalogOf(reference);
    expect(comparable(made)).toEqual(comparable(expected));
    expect(expected.withoutRowid).toEqual(['keygate_usage']);
    expect(made.withoutRowid).toEqual([]);
    expect(made.versions).toEqual([1, 2]);
    expect(made.tables).toHaveLength(15);
    expect(made.tables.flatMap((t) => t.columns)).toHaveLength(99);
    expect(made.tables.flatMap((t) => t.indexes.filter((i) => i.origin === 'c'))).toHaveLength(17);
    expect(made.tables.flatMap((t) => t.checks)).toHaveLength(17);
    expect(made.triggers.map((t) => t.name)).toEqual([
      'keygate_audit_no_delete',
      'keygate_audit_no_update',
      'keygate_keys_revoked_is_final',
    ]);
  });

  it("leaves keygate's own migrate() nothing to do, and the catalog as it was", async () => {
    const before = sqliteCatalogOf(drizzled);
    expect((await migrateTheKeygateWay(drizzled)).keys).toEqual({ applied: [] });
    expect(sqliteCatalogOf(drizzled)).toEqual(before);
  });

  it('keeps a revoked key final and the audit log append-only, in the file itself', async () => {
    const { keys, audit } = drizzleSqliteStores(drizzle(drizzled));
    const manager = new KeyManager({ store: keys });
    const { key } = await manager.create({ accountId: 'acct_triggers', name: 'ci', mode: 'test' });
    await manager.revoke(key.id);
    expect(refusal(() => drizzled.prepare(`UPDATE keygate_keys SET name = 'x' WHERE id = ?`).run(key.id))).toMatch(
      /keygate: the key is revoked and can no longer be changed/,
    );
    const [entry] = await audit.list({ accountId: key.accountId });
    expect(entry?.action).toBe('key.revoked');
    expect(
      refusal(() => drizzled.prepare(`UPDATE keygate_audit SET action = 'x' WHERE id = ?`).run(entry?.id)),
    ).toMatch(/append-only; UPDATE on keygate_audit is refused/);
    expect(refusal(() => drizzled.prepare('DELETE FROM keygate_audit WHERE id = ?').run(entry?.id))).toMatch(
      /append-only; DELETE on keygate_audit is refused/,
    );
    keys.close();
  });

  it('puts the file in WAL mode when the stores are built, as migrate() would', () => {
    const path = files.path();
    const db = files.connect(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    drizzleSqliteStores(drizzle(db)).keys.close();
    expect(files.connect(path).pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it("gives the same catalog when drizzle-orm's migrator applies the folder at start-up instead of the CLI", () => {
    const fresh = files.connect(files.path());
    migrate(drizzle(fresh), { migrationsFolder: join(project.dir, 'drizzle') });
    expect(sqliteCatalogOf(fresh)).toEqual(sqliteCatalogOf(drizzled));
  });

  it("joins the application's table to keygate's keys with Drizzle's query builder, JSON columns parsed", async () => {
    const db = drizzle(drizzled);
    const { keygateKeys } = keygateSqliteTables();
    const { key } = await new KeyManager({ store: drizzleSqliteStores(db).keys }).create({
      accountId: 'acct_join',
      name: 'deploy',
      mode: 'live',
      permissions: ['read'],
    });
    drizzled.prepare('INSERT INTO widgets (id, owner_key_id) VALUES (?, ?)').run('w1', key.id);
    const widgets = sqliteTable('widgets', { id: text('id').primaryKey(), ownerKeyId: text('owner_key_id').notNull() });
    const rows = db
      .select({ widget: widgets.id, keyName: keygateKeys.name, permissions: keygateKeys.permissions })
      .from(widgets)
      .innerJoin(keygateKeys, eq(keygateKeys.id, widgets.ownerKeyId))
      .all();
    expect(rows).toEqual([{ widget: 'w1', keyName: 'deploy', permissions: ['read'] }]);
  });
});
