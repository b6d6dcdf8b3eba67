// The parts of the Workers bindings keygate uses, typed structurally: a D1 binding (`env.DB`) or
// Miniflare's `getD1Database()`, and a KV namespace, fit without `@cloudflare/workers-types`.

/**
 * A prepared D1 statement: the calls keygate makes on one.
 *
 * @example
 * const row = await db.prepare('SELECT 1 AS one').first<{ one: number }>();
 */
export interface D1StatementLike {
  bind(...values: unknown[]): D1StatementLike;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<D1ResultLike<T>>;
  run<T = Record<string, unknown>>(): Promise<D1ResultLike<T>>;
}

/**
 * What D1 answers for one statement: the rows and how many were changed.
 *
 * @example
 * const { results, meta } = await db.prepare(sql).bind(id).run();
 */
export interface D1ResultLike<T = unknown> {
  results: T[];
  meta: { changes?: number };
}

/**
 * A D1 database binding (`env.DB` in a Worker). `batch` runs its statements as one transaction.
 *
 * @example
 * const store = new D1KeyStore({ db: env.DB satisfies D1Like });
 */
export interface D1Like {
  prepare(query: string): D1StatementLike;
  batch<T = unknown>(statements: D1StatementLike[]): Promise<D1ResultLike<T>[]>;
}

/**
 * A Workers KV namespace binding (`env.KEYS`): text values, an optional `expirationTtl` in seconds.
 *
 * @example
 * const store = new D1KeyStore({ db: env.DB, cache: env.KEYS satisfies KVLike });
 */
export interface KVLike {
  get(key: string): Promise<string | null>;
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
  delete(key: string): Promise<void>;
}
