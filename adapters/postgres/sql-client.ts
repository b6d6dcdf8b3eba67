import { InvalidInputError } from 'keygate';
import type { Notification, Pool, PoolClient } from 'pg';

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

/** What the store needs of a database, whichever client carries it. */
export interface SqlClient {
  readonly kind: 'pg' | 'pglite';
  query: Query;
  /** Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (query: Query) => Promise<T>): Promise<T>;
  /** Delivers NOTIFY payloads of `channel` until the returned function is called. */
  listen(channel: string, onPayload: (payload: string) => void): () => void;
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

/**
 * Wraps a `pg` Pool or a PGlite instance, told apart by duck typing.
 *
 * @example
 * const sql = sqlClient(new pg.Pool({ connectionString })); // or sqlClient(new PGlite('./.keygate'))
 */
export function sqlClient(client: unknown, onListenError: (err: unknown) => void): SqlClient {
  if (isPGlite(client)) return pgliteClient(client, onListenError);
  if (isPool(client)) return poolClient(client, onListenError);
  throw new InvalidInputError('client', 'client must be a pg Pool or a PGlite instance');
}

function pgliteClient(db: PGliteLike, onListenError: (err: unknown) => void): SqlClient {
  return {
    kind: 'pglite',
    query: (text, params) => db.query(text, params ? [...params] : undefined),
    transaction: (fn) => db.transaction((tx) => fn((text, params) => tx.query(text, params ? [...params] : undefined))),
    listen(channel, onPayload) {
      // PGlite runs in this process, so its notifications only reach this process: enough for an embedded store.
      let stopped = false;
      const unlisten = db.listen(channel, onPayload);
      unlisten.catch(onListenError);
      return () => {
        if (stopped) return;
        stopped = true;
        unlisten.then((off) => off()).catch(() => {});
      };
    },
  };
}

function poolClient(pool: Pool, onListenError: (err: unknown) => void): SqlClient {
  const query: Query = (text, params) => pool.query(text, params ? [...params] : undefined) as never;
  return {
    kind: 'pg',
    query,
    async transaction(fn) {
      const conn = await pool.connect();
      try {
        await conn.query('BEGIN');
        const result = await fn((text, params) => conn.query(text, params ? [...params] : undefined) as never);
        await conn.query('COMMIT');
        conn.release();
        return result;
      } catch (err) {
        // A connection that cannot even roll back is broken: release(err) makes the pool drop it.
        const broken = await conn.query('ROLLBACK').then(
          () => undefined,
          (rollbackError: Error) => rollbackError,
        );
        conn.release(broken);
        throw err;
      }
    },
    listen: (channel, onPayload) => listenOnPool(pool, channel, onPayload, onListenError),
  };
}

const MIN_BACKOFF = 100;
const MAX_BACKOFF = 5_000;

/**
 * Holds one pooled connection in LISTEN and takes a new one, with exponential backoff (100 ms doubling
 * to 5 s), whenever it drops. Changes made while it is down are missed: caches then fall back to their TTL.
 */
function listenOnPool(
  pool: Pool,
  channel: string,
  onPayload: (payload: string) => void,
  onError: (err: unknown) => void,
): () => void {
  let conn: PoolClient | undefined;
  let stopped = false;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const onNotification = (msg: Notification) => {
    if (msg.channel === channel && msg.payload !== undefined) onPayload(msg.payload);
  };
  const lost = (client: PoolClient, err: unknown) => {
    if (conn !== client) return;
    conn = undefined;
    client.removeListener('notification', onNotification);
    client.release(err instanceof Error ? err : new Error('LISTEN connection ended'));
    onError(err);
    schedule();
  };
  const schedule = () => {
    if (stopped) return;
    const delay = Math.min(MAX_BACKOFF, MIN_BACKOFF * 2 ** failures);
    failures++;
    timer = setTimeout(connect, delay);
  };
  const connect = async () => {
    timer = undefined;
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      onError(err);
      schedule();
      return;
    }
    if (stopped) {
      client.release();
      return;
    }
    conn = client;
    client.on('notification', onNotification);
    client.on('error', (err) => lost(client, err));
    client.on('end', () => lost(client, new Error('LISTEN connection ended')));
    try {
      // The channel is a validated identifier (see the store's constructor); LISTEN takes no parameters.
      await client.query(`LISTEN "${channel}"`);
      failures = 0;
    } catch (err) {
      lost(client, err);
    }
  };

  void connect();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    const client = conn;
    conn = undefined;
    if (client) {
      client.removeListener('notification', onNotification);
      // Destroying the connection ends its LISTEN with it; a LISTENing connection must not go back to the pool.
      client.release(true);
    }
  };
}
