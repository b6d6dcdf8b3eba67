import type { SqlEngine } from '../../sql/engine.js';
import { ISO_TIME } from '../../sql/key-record.js';
import { runAsync, type SqlRunner, type SqlTx } from '../../sql/step.js';
import type { D1Like } from './bindings.js';
import { d1Guarded } from './errors.js';

/**
 * How the SQL core runs on D1. D1 has no interactive transaction (only `batch`), so a step's
 * statements go one by one: the core hands it single-statement writes only.
 *
 * @example
 * const entries = await d1Runner(env.DB).read(function* (tx) { ... });
 */
export function d1Runner(db: D1Like): SqlRunner {
  const tx: SqlTx = {
    all: async <R>(sql: string, params: readonly unknown[] = []) =>
      (
        await db
          .prepare(sql)
          .bind(...params)
          .all<R>()
      ).results,
    run: async (sql, params = []) => {
      const { meta } = await db
        .prepare(sql)
        .bind(...params)
        .run();
      return { changes: Number(meta.changes ?? 0) };
    },
  };
  const run = <T>(body: (tx: SqlTx) => Generator<unknown, T, unknown>) => d1Guarded(() => runAsync(body(tx)));
  return { read: run, transaction: run };
}

/**
 * The SQL core's engine on D1: the SQLite family's tables and ISO text instants.
 *
 * @example
 * const log = new SqlAuditLog(d1Engine(env.DB));
 */
export function d1Engine(db: D1Like): SqlEngine {
  return { runner: d1Runner(db), time: ISO_TIME, table: (name) => `keygate_${name}` };
}
