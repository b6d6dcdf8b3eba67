// A transaction body written once for drivers that answer at once (SQLite) and drivers that answer
// with a promise (pg, mysql2, D1). The body is a generator that yields each driver answer; a sync
// runner hands it straight back (so a SQLite transaction stays one synchronous call, which nothing
// else on the connection can interleave with), an async runner awaits it.

/**
 * A step of work over a driver: a generator that yields driver answers (values or promises) and gets
 * each back settled.
 *
 * @example
 * function* count(tx: SqlTx): Step<number> { return (yield* wait(tx.all('SELECT 1'))).length; }
 */
export type Step<T> = Generator<unknown, T, unknown>;

/**
 * Yields a driver answer and returns it settled: `yield* wait(tx.all(sql, params))`.
 *
 * @example
 * const rows = yield* wait(tx.all<KeyRow>(sql, [id]));
 */
export function* wait<T>(answer: T | PromiseLike<T>): Step<T> {
  return (yield answer) as T;
}

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof (v as { then?: unknown } | null)?.then === 'function';

/**
 * Runs a step over a synchronous driver to its end, in the caller's turn of the event loop.
 *
 * @example
 * driver.transaction(() => runSync(body(tx)), busyTimeoutMs);
 */
export function runSync<T>(step: Step<T>): T {
  let next = step.next();
  while (!next.done) {
    if (isThenable(next.value)) throw new Error('keygate: a synchronous driver answered with a promise');
    next = step.next(next.value);
  }
  return next.value;
}

/**
 * Runs a step over an asynchronous driver: each answer awaited, a rejection thrown into the body.
 *
 * @example
 * await sql.transaction((q) => runAsync(body(txOf(q))));
 */
export async function runAsync<T>(step: Step<T>): Promise<T> {
  let next = step.next();
  while (!next.done) {
    let settled: unknown;
    try {
      settled = await next.value;
    } catch (err) {
      next = step.throw(err);
      continue;
    }
    next = step.next(settled);
  }
  return next.value;
}

/**
 * What a statement changed: rows affected, and the id an insert made where the driver reports one.
 *
 * @example
 * const { changes }: RunInfo = yield* wait(tx.run('DELETE FROM t WHERE at < ?', [cutoff]));
 */
export interface RunInfo {
  changes: number;
  insertId?: number;
}

/**
 * One connection inside a transaction (or outside one, for reads): statements with `?` placeholders,
 * which the dialect rewrites for its driver. Answers come back at once or as promises.
 *
 * @example
 * const rows = yield* wait(tx.all<{ n: number }>('SELECT count(*) AS n FROM keygate_keys'));
 */
export interface SqlTx {
  all<R>(sql: string, params?: readonly unknown[]): R[] | Promise<R[]>;
  run(sql: string, params?: readonly unknown[]): RunInfo | Promise<RunInfo>;
}

/**
 * How an engine runs the core's steps: reads on any connection, writes in one transaction. Both
 * reject with keygate errors only (a driver failure is `KeyStoreUnavailableError` with its error as `cause`).
 *
 * @example
 * const runner: SqlRunner<PgTx> = { read: (body) => runAsync(body(pgTx(sql.query))), transaction: ... };
 */
export interface SqlRunner<X extends SqlTx = SqlTx> {
  read<T>(body: (tx: X) => Step<T>): Promise<T>;
  transaction<T>(body: (tx: X) => Step<T>): Promise<T>;
}
