import { applyMigrations } from '../../sql/migrate.js';
import { SQLITE_LEDGER, SQLITE_RECORD, sqliteRecorded } from '../../sql/sqlite/ledger.js';
import { KEY_STORE_MIGRATIONS } from '../../sql/sqlite/migrations.js';
import { runAsync } from '../../sql/step.js';
import type { D1Like, D1StatementLike } from './bindings.js';
import { d1Error } from './errors.js';

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
  const recorded = () => sqliteRecorded((sql) => db.prepare(sql).first());
  try {
    const current = await recorded();
    if (current >= KEY_STORE_MIGRATIONS.length) return { applied: [] };
    // D1 has no interactive transaction: the statements are gathered, then sent as one batch.
    const batch: D1StatementLike[] = [];
    const at = new Date().toISOString();
    const result = await runAsync(
      applyMigrations(KEY_STORE_MIGRATIONS, {
        prepare: () => batch.push(db.prepare(SQLITE_LEDGER)),
        recorded: () => current,
        apply: (statement) => batch.push(db.prepare(statement)),
        record: (v) => batch.push(db.prepare(SQLITE_RECORD).bind(v, at)),
      }),
    );
    try {
      await db.batch(batch);
    } catch (err) {
      // Another caller applied them in the meantime: its batch won, ours rolled back whole.
      if ((await recorded()) >= KEY_STORE_MIGRATIONS.length) return { applied: [] };
      throw err;
    }
    return result;
  } catch (err) {
    throw d1Error(err);
  }
}
