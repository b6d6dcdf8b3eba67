import type { SqliteDriver, SqlValue } from 'keygate/sqlite';
import type { DurableObjectStateLike, SqlStorageLike } from './workers-types.js';

/**
 * A `keygate/sqlite` driver over a SQLite-backed Durable Object's storage: statements go to
 * `ctx.storage.sql.exec` (synchronous, in the object's own database) and a transaction is
 * `ctx.storage.transactionSync(fn)` (DO SQL refuses BEGIN and COMMIT). There is no lock to wait for:
 * the object runs one request's synchronous code at a time, so `busyTimeoutMs` is not used. Throws
 * when the object is not SQLite-backed (declared under `new_classes` rather than `new_sqlite_classes`).
 *
 * @example
 * const limiter = new SqliteRateLimiter({ database: durableObjectSqlDriver(ctx) });
 */
export function durableObjectSqlDriver(ctx: DurableObjectStateLike): SqliteDriver {
  const sql = ctx.storage.sql;
  if (!sql) {
    throw new Error(
      'keygate: this Durable Object has no SQL storage; declare its class under new_sqlite_classes in a wrangler.toml migration',
    );
  }
  const rows = (text: string, params?: readonly SqlValue[]) => sql.exec(text, ...bind(params)).toArray();
  return {
    isKeygateSqliteDriver: true,
    run(text, params) {
      const cursor = sql.exec(text, ...bind(params));
      cursor.toArray();
      return { changes: cursor.rowsWritten, lastInsertRowid: lastRowid(sql) };
    },
    get: <R>(text: string, params?: readonly SqlValue[]) => rows(text, params)[0] as R | undefined,
    all: <R>(text: string, params?: readonly SqlValue[]) => rows(text, params) as R[],
    exec(text) {
      sql.exec(text);
    },
    transaction: (fn) => ctx.storage.transactionSync(fn),
  };
}

/**
 * A driver over the object's storage with `tables` created (each statement idempotent), handed to
 * `open`: what an object builds on its first call.
 *
 * @example
 * this.limiter ??= openTables(ctx, RATE_LIMIT_TABLES, (database) => new SqliteRateLimiter({ database }));
 */
export function openTables<T>(
  ctx: DurableObjectStateLike,
  tables: readonly string[],
  open: (database: SqliteDriver) => T,
): T {
  const driver = durableObjectSqlDriver(ctx);
  for (const statement of tables) driver.exec(statement);
  return open(driver);
}

function lastRowid(sql: SqlStorageLike): number {
  return Number(sql.exec('SELECT last_insert_rowid() AS id').toArray()[0]?.id ?? 0);
}

// DO SQL binds strings, numbers, null and ArrayBuffers: booleans go as 1 or 0, undefined as NULL,
// bigints as numbers, byte arrays as their buffer.
function bind(params: readonly SqlValue[] | undefined): unknown[] {
  if (!params) return [];
  return params.map((p) => {
    if (p === undefined) return null;
    if (typeof p === 'boolean') return p ? 1 : 0;
    if (typeof p === 'bigint') return Number(p);
    if (p instanceof Uint8Array) return p.slice().buffer;
    return p;
  });
}
