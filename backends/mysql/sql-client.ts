import { InvalidInputError } from 'keygate';
import { quote } from 'keygate/store-kit';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { errnoOf, storeError } from './errors.js';

/** What a statement answered: its rows (a SELECT), or how many rows it changed and the id it made. */
export interface Result<R> {
  rows: R[];
  affectedRows: number;
  insertId: number;
}

/** Runs one statement; `?` placeholders take `params` in order (mysql2 escapes them). */
export type Query = <R = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => Promise<Result<R>>;

/**
 * What the classes need of a database, whichever pool carries it. `query` and `transaction` reject
 * with keygate errors only: a client failure is `KeyStoreUnavailableError` with the client's error as `cause`.
 */
export interface SqlClient {
  query: Query;
  /**
   * Runs one `CALL` of a stored procedure that runs its own transaction (and rolls it back on any
   * error): the rows of its first result set. A call the server chose as a deadlock victim runs again,
   * up to 8 times, as a `transaction` does.
   */
  call: Query;
  /**
   * Runs `fn` in one transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when it
   * throws. A transaction the server chose as a deadlock victim (which it rolled back whole) runs again,
   * up to 8 times, so `fn` must do nothing but talk to the database through the `Query` it gets.
   */
  transaction<T>(fn: (query: Query) => Promise<T>): Promise<T>;
  /** Runs `fn` on one pooled connection outside a transaction (for session locks), then releases it. */
  session<T>(fn: (query: Query) => Promise<T>): Promise<T>;
}

const PREFIX = /^[a-z][a-z0-9_]{0,39}$/;

/**
 * The `tablePrefix` option: lower-case letters, digits and `_`, starting with a letter, at most 40
 * characters, safe to write into SQL (tables are named `<prefix>keys`, `<prefix>usage`, ...; values
 * always go as parameters). Anything else throws `InvalidInputError` naming `tablePrefix`.
 *
 * @example
 * validTablePrefix(options.tablePrefix ?? 'keygate_') // 'keygate_'
 * validTablePrefix('kg`; DROP')                        // throws InvalidInputError, field 'tablePrefix'
 */
export function validTablePrefix(prefix: unknown): string {
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw new InvalidInputError(
      'tablePrefix',
      `tablePrefix must be a lower-case letter, then letters, digits and _ (at most 40), got ${quote(prefix)}`,
    );
  }
  return prefix;
}

/**
 * Wraps a `mysql2/promise` Pool (or a callback pool of `mysql2`, through its `promise()`). A single
 * connection is refused: concurrent transactions on one connection would interleave.
 *
 * @example
 * const sql = sqlClient(mysql.createPool({ uri: 'mysql://root@127.0.0.1:3306/app' }));
 */
export function sqlClient(client: unknown): SqlClient {
  const pool = promisePool(client);
  if (!pool) {
    throw new InvalidInputError(
      'client',
      'client must be a mysql2/promise Pool (mysql.createPool from mysql2/promise)',
    );
  }
  return {
    query: (text, params) => guarded(() => run(pool, text, params)),
    call: (text, params) => guarded(() => retried(() => firstResultSet(run(pool, text, params)))),
    transaction: (fn) => guarded(() => retried(() => transaction(pool, fn))),
    session: (fn) => guarded(() => session(pool, fn)),
  };
}

function promisePool(client: unknown): Pool | undefined {
  const c = (client ?? {}) as Partial<Pool> & { promise?: () => unknown };
  const isPromisePool = (p: Partial<Pool>) =>
    typeof p.getConnection === 'function' && typeof p.query === 'function' && typeof p.pool === 'object';
  if (isPromisePool(c)) return c as Pool;
  // mysql2's callback pool: its promise() wraps the same connections.
  if (typeof c.promise === 'function' && typeof c.getConnection === 'function') {
    const wrapped = c.promise() as Partial<Pool>;
    if (isPromisePool(wrapped)) return wrapped as Pool;
  }
  return undefined;
}

interface Runner {
  query(options: object): Promise<[unknown, unknown]>;
}

// Per statement, whatever the pool was configured with: DATETIME and DATE come back as text (they hold
// UTC; the pool's time zone must not shift them) and BIGINT as text (counts past 2**53 stay exact).
async function run<R>(on: Runner, sql: string, params?: readonly unknown[]): Promise<Result<R>> {
  const [result] = await on.query({
    sql,
    values: params ? [...params] : [],
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  if (Array.isArray(result)) return { rows: result as R[], affectedRows: 0, insertId: 0 };
  const header = (result ?? {}) as { affectedRows?: number; insertId?: number };
  return { rows: [], affectedRows: Number(header.affectedRows ?? 0), insertId: Number(header.insertId ?? 0) };
}

// A CALL answers its result sets, then a header: the first set's rows are the procedure's answer.
async function firstResultSet<R>(answer: Promise<Result<R>>): Promise<Result<R>> {
  const result = await answer;
  const first = (result.rows as unknown[])[0];
  return { ...result, rows: Array.isArray(first) ? (first as R[]) : [] };
}

/** Runs `work`, turning whatever the client throws into a keygate error (see `storeError`). */
function guarded<T>(work: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve) => resolve(work())).catch((err: unknown) => {
    throw storeError(err);
  });
}

const ER_LOCK_DEADLOCK = 1213;
const ATTEMPTS = 8;

async function retried<T>(attempt: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (errnoOf(err) !== ER_LOCK_DEADLOCK || i >= ATTEMPTS) throw err;
      // InnoDB rolled the victim back whole; a short random pause lets the winner commit first.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * i));
    }
  }
}

async function transaction<T>(pool: Pool, fn: (query: Query) => Promise<T>): Promise<T> {
  const conn = await pool.getConnection();
  try {
    await conn.query('START TRANSACTION');
    const result = await fn((text, params) => run(conn, text, params));
    await conn.query('COMMIT');
    conn.release();
    return result;
  } catch (err) {
    await giveBack(conn, 'ROLLBACK');
    throw err;
  }
}

async function session<T>(pool: Pool, fn: (query: Query) => Promise<T>): Promise<T> {
  const conn = await pool.getConnection();
  try {
    const result = await fn((text, params) => run(conn, text, params));
    conn.release();
    return result;
  } catch (err) {
    await giveBack(conn, 'DO 0');
    throw err;
  }
}

// A connection that cannot even answer `statement` after a failure is broken: destroyed, not pooled again.
async function giveBack(conn: PoolConnection, statement: string): Promise<void> {
  try {
    await conn.query(statement);
    conn.release();
  } catch {
    conn.destroy();
  }
}

/**
 * An ISO 8601 instant as a `DATETIME(3)` literal in UTC (`2026-11-22 12:00:00.000`), or null.
 *
 * @example
 * sqlTime('2026-11-22T12:00:00.000Z') // '2026-11-22 12:00:00.000'
 */
export function sqlTime(iso: string | null | undefined): string | null {
  if (iso === null || iso === undefined) return null;
  return new Date(iso).toISOString().slice(0, 23).replace('T', ' ');
}

/**
 * A `DATETIME(3)` value read as text (UTC) as an ISO 8601 string; a Date (a pool with a type cast of
 * its own) is taken as it is.
 *
 * @example
 * isoTime('2026-11-22 12:00:00.000') // '2026-11-22T12:00:00.000Z'
 */
export function isoTime(value: string | Date): string {
  if (value instanceof Date) return value.toISOString();
  return new Date(`${value.replace(' ', 'T')}Z`).toISOString();
}

/** {@link isoTime}, keeping null. */
export function isoTimeOrNull(value: string | Date | null): string | null {
  return value === null ? null : isoTime(value);
}

/** A JSON column: MySQL 8's JSON type arrives parsed, MariaDB's (LONGTEXT) as text. */
export function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
