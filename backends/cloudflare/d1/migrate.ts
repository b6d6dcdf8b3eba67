import { KEY_STORE_MIGRATIONS } from '../../sqlite/migrations.js';
import type { D1Like } from './bindings.js';
import { d1Error } from './errors.js';

const LEDGER = 'CREATE TABLE IF NOT EXISTS keygate_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)';

/**
 * Creates or upgrades keygate's tables in D1: the same versioned schema as `keygate/sqlite`
 * (`KEY_STORE_MIGRATIONS`, recorded in `keygate_migrations`). The versions not yet recorded run in
 * one `batch` (one transaction: all or nothing). A concurrent caller whose batch fails because the
 * other created the tables first finds the versions recorded and returns `{ applied: [] }`.
 *
 * @example
 * await migrateD1(env.DB); // { applied: [1] }, then { applied: [] }
 */
export async function migrateD1(db: D1Like): Promise<{ applied: number[] }> {
  try {
    const current = await currentVersion(db);
    if (current >= KEY_STORE_MIGRATIONS.length) return { applied: [] };
    const applied: number[] = [];
    const statements = [db.prepare(LEDGER)];
    const at = new Date().toISOString();
    for (let v = current + 1; v <= KEY_STORE_MIGRATIONS.length; v++) {
      for (const sql of KEY_STORE_MIGRATIONS[v - 1] ?? []) statements.push(db.prepare(sql));
      statements.push(db.prepare('INSERT INTO keygate_migrations (version, applied_at) VALUES (?, ?)').bind(v, at));
      applied.push(v);
    }
    try {
      await db.batch(statements);
    } catch (err) {
      // Another caller applied them in the meantime: its batch won, ours rolled back whole.
      if ((await currentVersion(db)) >= KEY_STORE_MIGRATIONS.length) return { applied: [] };
      throw err;
    }
    return { applied };
  } catch (err) {
    throw d1Error(err);
  }
}

async function currentVersion(db: D1Like): Promise<number> {
  const present = await db
    .prepare(`SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'keygate_migrations'`)
    .first();
  if (!present) return 0;
  const row = await db.prepare('SELECT max(version) AS v FROM keygate_migrations').first<{ v: number | null }>();
  return Number(row?.v ?? 0);
}
