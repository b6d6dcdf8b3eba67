import { InvalidInputError } from 'keygate';
import { quote } from 'keygate/store-kit';
import type { Pool } from 'pg';
import { storeError } from './errors.js';
import { type ListenHandlers, listenOnPool } from './listener.js';

/** Runs one parameterised statement. */
export type Query = <R = Record<string, unknown>>(text: string, params?: readonly unknown[]) => Promise<{ rows: R[] }>;

/**
 * The part of `@electric-sql/pglite` this store uses, typed structurally so that PGlite stays an
 * optional peer: any version with `query`, `transaction` and `listen` fits.
 */
export interface PGliteLike {
  query<R>(text: string, params?: unknown[]): Promise<{ rows: R[] }>;
  transaction<T>(
    fn: (tx: { query<R>(text: string, params?: unknown[]): Promise<{ rows: R[] }> }) => Promise<T>,
  ): Promise<T>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/**
 * What the store needs of a database, whichever client carries it. `query` and `transaction` reject
 * with keygate errors only: a client failure is `KeyStoreUnavailableError` with the client's error as `cause`.
 */
export interface SqlClient {
  query: Query;
  /** Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (query: Query) => Promise<T>): Promise<T>;
  /** Delivers NOTIFY payloads of `channel` until the returned function is called. */
  listen(channel: string, handlers: ListenHandlers): () => void;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,39}$/;

/**
 * The schema option of the store and the rate limiter: a lower-case identifier of at most 40
 * characters, safe to quote into SQL (tables are named `"<schema>".keygate_…`; values always go as
 * parameters). Anything else throws `InvalidInputError` naming `schema`.
 *
 * @example
 * validSchema(options.schema ?? 'public') // 'public'
 * validSchema('Robert"; DROP')            // throws InvalidInputError, field 'schema'
 */
export function validSchema(schema: unknown): string {
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema)) {
    throw new InvalidInputError(
      'schema',
      `schema must be lower-case letters, digits and _ (at most 40), got ${quote(schema)}`,
    );
  }
  return schema;
}

/**
 * Wraps a `pg` Pool or a PGlite instance, told apart by duck typing.
 *
 * @example
 * const sql = sqlClient(new pg.Pool({ connectionString })); // or sqlClient(new PGlite('./.keygate'))
 */
export function sqlClient(client: unknown): SqlClient {
  if (isPGlite(client)) return pgliteClient(client);
  if (isPool(client)) return poolClient(client);
  throw new InvalidInputError('client', 'client must be a pg Pool or a PGlite instance');
}

function isPGlite(client: unknown): client is PGliteLike {
  const c = (client ?? {}) as Partial<PGliteLike>;
  return typeof c.query === 'function' && typeof c.transaction === 'function' && typeof c.listen === 'function';
}

// A pg Pool has `connect` and pool counters; a bare pg Client has no counters, and is refused because
// concurrent transactions on one connection would interleave.
function isPool(client: unknown): client is Pool {
  const c = (client ?? {}) as Partial<Pool>;
  return typeof c.connect === 'function' && typeof c.query === 'function' && typeof c.totalCount === 'number';
}

/** Runs `work`, turning whatever the client throws into a keygate error (see `storeError`). */
function guarded<T>(work: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve) => resolve(work())).catch((err: unknown) => {
    throw storeError(err);
  });
}

function pgliteClient(db: PGliteLike): SqlClient {
  return {
    query: (text, params) => guarded(() => db.query(text, params ? [...params] : undefined)),
    transaction: (fn) =>
      guarded(() => db.transaction((tx) => fn((text, params) => tx.query(text, params ? [...params] : undefined)))),
    listen: (channel, handlers) => listenOnPGlite(db, channel, handlers),
  };
}

// PGlite runs in this process, so its notifications only reach this process: enough for an embedded store.
function listenOnPGlite(db: PGliteLike, channel: string, handlers: ListenHandlers): () => void {
  let stopped = false;
  const unlisten = db.listen(channel, (payload) => handlers.onPayload(payload));
  unlisten.then(() => {
    if (!stopped) handlers.onListening();
  }, handlers.onError);
  return () => {
    if (stopped) return;
    stopped = true;
    unlisten.then((off) => off()).catch(() => {});
  };
}

function poolClient(pool: Pool): SqlClient {
  const query: Query = (text, params) => guarded(() => pool.query(text, params ? [...params] : undefined) as never);
  return {
    query,
    transaction: (fn) => guarded(() => poolTransaction(pool, fn)),
    listen: (channel, handlers) => listenOnPool(pool, channel, handlers),
  };
}

async function poolTransaction<T>(pool: Pool, fn: (query: Query) => Promise<T>): Promise<T> {
  const conn = await pool.connect();
  // A checked-out connection that drops emits 'error', which would crash the process unheard; the
  // query in progress rejects with the same error, so listening is enough.
  const ignore = () => {};
  conn.on('error', ignore);
  try {
    await conn.query('BEGIN');
    const result = await fn((text, params) => conn.query(text, params ? [...params] : undefined) as never);
    await conn.query('COMMIT');
    conn.off('error', ignore);
    conn.release();
    return result;
  } catch (err) {
    // A connection that cannot even roll back is broken: release(err) makes the pool drop it.
    const broken = await conn.query('ROLLBACK').then(
      () => undefined,
      (rollbackError: Error) => rollbackError,
    );
    conn.off('error', ignore);
    conn.release(broken);
    throw err;
  }
}
