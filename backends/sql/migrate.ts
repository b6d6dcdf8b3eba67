import { type Step, wait } from './step.js';

/**
 * A component's schema: one entry per version (version 1 first), each a list of statements. Never
 * edit a released entry: add the next version.
 *
 * @example
 * const migrations: Migrations = [['CREATE TABLE t (id TEXT PRIMARY KEY)'], ['CREATE INDEX t_id ON t (id)']];
 */
export type Migrations = readonly (readonly string[])[];

/**
 * What the runner needs of one connection holding the migration lock: the dialect creates its
 * ledger table (`keygate_migrations` or `<prefix>migrations`), reads the newest version recorded
 * there, runs a statement and records a version. Answers come at once (SQLite) or as promises.
 *
 * @example
 * const ledger: MigrationLedger = { prepare: () => tx.run(LEDGER), recorded: () => 0, apply: (s) => tx.run(s), record: (v) => tx.run(INSERT, [v]) };
 */
export interface MigrationLedger {
  prepare(): unknown;
  recorded(): number | Promise<number>;
  apply(statement: string): unknown;
  record(version: number): unknown;
}

/**
 * Applies the versions of `migrations` newer than the ledger's newest, in order, recording each:
 * run under the dialect's migration lock (an advisory lock, `GET_LOCK`, `BEGIN IMMEDIATE` or one
 * D1 batch), so a concurrent caller finds the versions recorded and applies nothing.
 *
 * @example
 * await sql.transaction((tx) => runAsync(applyMigrations(MIGRATIONS, ledgerOf(tx)))); // { applied: [1, 2] }
 */
export function* applyMigrations(migrations: Migrations, ledger: MigrationLedger): Step<{ applied: number[] }> {
  yield* wait(ledger.prepare());
  const current = yield* wait(ledger.recorded());
  const applied: number[] = [];
  for (let v = current + 1; v <= migrations.length; v++) {
    for (const statement of migrations[v - 1] ?? []) yield* wait(ledger.apply(statement));
    yield* wait(ledger.record(v));
    applied.push(v);
  }
  return { applied };
}

/**
 * Migrates through a dialect: `recorded()` is read first without the lock (so the common case, a
 * schema already current, costs a read or two and takes no lock); only a schema behind takes the
 * lock, where the recorded version decides again.
 *
 * @example
 * await migrateUnderLock(MIGRATIONS, { recorded: () => currentVersion(sql), locked: (body) => withLock(body) });
 */
export async function migrateUnderLock(
  migrations: Migrations,
  dialect: {
    recorded(): Promise<number>;
    locked(body: (ledger: MigrationLedger) => Step<{ applied: number[] }>): Promise<{ applied: number[] }>;
  },
): Promise<{ applied: number[] }> {
  if ((await dialect.recorded()) >= migrations.length) return { applied: [] };
  return dialect.locked((ledger) => applyMigrations(migrations, ledger));
}
