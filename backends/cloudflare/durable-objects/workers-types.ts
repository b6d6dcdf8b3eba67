// The parts of the Workers runtime's Durable Object types that keygate uses, typed structurally so
// that neither `@cloudflare/workers-types` nor `cloudflare:workers` is needed to build or import it.

/**
 * A Durable Object's id, as `namespace.idFromName()` returns it; `toString()` is its 64 hex digits.
 *
 * @example
 * const id: DurableObjectIdLike = env.KEYGATE_CREDITS.idFromName('acct_1');
 */
export interface DurableObjectIdLike {
  toString(): string;
}

/**
 * What `namespace.get(id)` returns: a stub whose `fetch` reaches the one object with that id.
 *
 * @example
 * const res = await env.KEYGATE_LIMITS.get(id).fetch('https://keygate.do/consume', { method: 'POST', body });
 */
export interface DurableObjectStubLike {
  fetch(url: string, init: { method: string; headers?: Record<string, string>; body: string }): Promise<ResponseLike>;
}

/**
 * The part of a `Response` the clients read (a Worker's `Response`, or Miniflare's from Node).
 *
 * @example
 * const body = (await res.json()) as unknown;
 */
export interface ResponseLike {
  readonly status: number;
  json(): Promise<unknown>;
}

/**
 * A Durable Object namespace binding (`env.KEYGATE_LIMITS`), typed by what the clients call.
 *
 * @example
 * const limiter = new DurableObjectRateLimiter({ namespace: env.KEYGATE_LIMITS });
 */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): DurableObjectIdLike;
  idFromString(hexId: string): DurableObjectIdLike;
  get(id: DurableObjectIdLike): DurableObjectStubLike;
}

/**
 * A SQLite-backed object's `ctx.storage.sql`: `exec` runs one statement (or several, without
 * parameters) synchronously and returns a cursor.
 *
 * @example
 * const rows = ctx.storage.sql.exec('SELECT used FROM keygate_rate_limits WHERE key_id = ?', 'key_1').toArray();
 */
export interface SqlStorageLike {
  exec(sql: string, ...params: unknown[]): SqlCursorLike;
}

/**
 * The cursor `sql.exec` returns.
 *
 * @example
 * const cursor = ctx.storage.sql.exec('DELETE FROM t'); cursor.toArray(); cursor.rowsWritten;
 */
export interface SqlCursorLike {
  toArray(): Record<string, unknown>[];
  readonly rowsWritten: number;
}

/**
 * The part of a Durable Object's `ctx` (its `DurableObjectState`) the objects use.
 *
 * @example
 * export class MyObject { constructor(ctx: DurableObjectStateLike) { ctx.storage.sql.exec('SELECT 1'); } }
 */
export interface DurableObjectStateLike {
  readonly storage: {
    /** Present on SQLite-backed objects only (`new_sqlite_classes` in the migration). */
    readonly sql?: SqlStorageLike;
    transactionSync<T>(fn: () => T): T;
    setAlarm(scheduledTimeMs: number): Promise<void> | void;
    deleteAll(): Promise<void> | void;
  };
}
