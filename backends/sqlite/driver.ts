import { InvalidInputError } from 'keygate';

/**
 * A value SQLite takes as a parameter. `boolean` goes as 1 or 0, `undefined` as NULL.
 *
 * @example
 * const params: SqlValue[] = ['key_1', 3, null];
 */
export type SqlValue = string | number | bigint | boolean | null | undefined | Uint8Array;

/**
 * What a write statement reports.
 *
 * @example
 * const { changes }: RunResult = driver.run('DELETE FROM keygate_rate_limits WHERE window_end <= ?', [Date.now()]);
 */
export interface RunResult {
  /** Rows inserted, updated or deleted by the statement. */
  readonly changes: number;
  /** The rowid of the last inserted row. */
  readonly lastInsertRowid: number | bigint;
}

/**
 * The small, synchronous interface every keygate SQLite class works through: one per database
 * connection. An adapter for another synchronous SQLite (a Durable Object's `ctx.storage.sql`, say)
 * implements these five members and is passed as `database`. Statements use `?` placeholders only,
 * which every SQLite driver accepts; integers come back as numbers.
 *
 * @example
 * const driver = sqliteDriver(new Database('keygate.db'));
 * driver.transaction(() => driver.run('INSERT INTO t (a) VALUES (?)', [1]));
 */
export interface SqliteDriver {
  /** Marks the object as a driver, so that the classes take it as it is. Always `true`. */
  readonly isKeygateSqliteDriver: true;
  /** Runs one write statement. */
  run(sql: string, params?: readonly SqlValue[]): RunResult;
  /** The first row of a query, or undefined. */
  get<R>(sql: string, params?: readonly SqlValue[]): R | undefined;
  /** Every row of a query. */
  all<R>(sql: string, params?: readonly SqlValue[]): R[];
  /** Runs statements without parameters or results (DDL, pragmas), several separated by `;`. */
  exec(sql: string): void;
  /**
   * Runs `fn` in one write transaction, taken before `fn` starts (`BEGIN IMMEDIATE`): the file's
   * write lock is waited for at most `busyTimeoutMs` milliseconds (then SQLITE_BUSY is thrown), and
   * is held until COMMIT, or ROLLBACK when `fn` throws. Transactions do not nest.
   */
  transaction<T>(fn: () => T, busyTimeoutMs: number): T;
}

/**
 * The part of a `better-sqlite3` Database the adapter uses (typed structurally: it is an optional peer).
 *
 * @example
 * const database: BetterSqlite3Like = new Database('keygate.db');
 */
export interface BetterSqlite3Like {
  prepare(sql: string): {
    run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  };
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
}

/**
 * The part of a `node:sqlite` DatabaseSync the adapter uses (Node 22.5+).
 *
 * @example
 * const database: NodeSqliteLike = new DatabaseSync('keygate.db');
 */
export interface NodeSqliteLike {
  prepare(sql: string): {
    run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  };
  exec(sql: string): void;
}

/**
 * What the classes take as `database`: a `better-sqlite3` Database, a `node:sqlite` DatabaseSync, or a driver.
 *
 * @example
 * const database: SqliteDatabase = new Database('keygate.db'); // or new DatabaseSync('keygate.db')
 */
export type SqliteDatabase = BetterSqlite3Like | NodeSqliteLike | SqliteDriver;

type Statement = ReturnType<NodeSqliteLike['prepare']>;

// One driver per database object, so that every class over one connection shares its statement cache
// and its record of the busy timeout in force.
const drivers = new WeakMap<object, SqliteDriver>();

/**
 * The driver for `database`: a `better-sqlite3` Database (told by its `pragma` method), a
 * `node:sqlite` DatabaseSync (`prepare` and `exec` without `pragma`), or a {@link SqliteDriver} as it
 * is. Anything else throws `InvalidInputError` naming `database`.
 *
 * @example
 * const driver = sqliteDriver(new DatabaseSync('keygate.db')); // node:sqlite, Node 22.5+
 */
export function sqliteDriver(database: unknown): SqliteDriver {
  const d = (database ?? {}) as Partial<SqliteDriver & BetterSqlite3Like>;
  if (d.isKeygateSqliteDriver === true) return d as SqliteDriver;
  if (typeof d.prepare !== 'function' || typeof d.exec !== 'function') {
    throw new InvalidInputError('database', 'database must be a better-sqlite3 Database or a node:sqlite DatabaseSync');
  }
  let driver = drivers.get(database as object);
  if (!driver) {
    driver = new StatementDriver(database as NodeSqliteLike);
    drivers.set(database as object, driver);
  }
  return driver;
}

// `better-sqlite3` refuses booleans and undefined; `node:sqlite` refuses undefined.
function bind(params: readonly SqlValue[] | undefined): unknown[] {
  if (!params) return [];
  return params.map((p) => (p === undefined ? null : typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/**
 * The adapter for both `better-sqlite3` and `node:sqlite`: their `prepare(sql).run/get/all(...params)`
 * are alike. Statements are prepared once per text and kept (the texts are keygate's own, a fixed set).
 */
class StatementDriver implements SqliteDriver {
  readonly isKeygateSqliteDriver = true as const;
  private readonly statements = new Map<string, Statement>();
  private busyTimeoutMs = -1;
  private depth = 0;

  constructor(private readonly db: NodeSqliteLike) {}

  private statement(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  run(sql: string, params?: readonly SqlValue[]): RunResult {
    const r = this.statement(sql).run(...bind(params));
    return { changes: Number(r.changes), lastInsertRowid: r.lastInsertRowid };
  }

  get<R>(sql: string, params?: readonly SqlValue[]): R | undefined {
    return (this.statement(sql).get(...bind(params)) ?? undefined) as R | undefined;
  }

  all<R>(sql: string, params?: readonly SqlValue[]): R[] {
    return this.statement(sql).all(...bind(params)) as R[];
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  transaction<T>(fn: () => T, busyTimeoutMs: number): T {
    if (this.depth > 0) throw new Error('keygate: SQLite transactions do not nest');
    if (busyTimeoutMs !== this.busyTimeoutMs) {
      // A pragma takes no parameter: the value is a whole number checked by the class that asks.
      this.db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.ceil(busyTimeoutMs))}`);
      this.busyTimeoutMs = busyTimeoutMs;
    }
    this.statement('BEGIN IMMEDIATE').run();
    this.depth++;
    try {
      const result = fn();
      this.statement('COMMIT').run();
      return result;
    } catch (err) {
      try {
        this.statement('ROLLBACK').run();
      } catch {
        // SQLite rolled back by itself (an I/O error or a full disk can do that): nothing left to undo.
      }
      throw err;
    } finally {
      this.depth--;
    }
  }
}
