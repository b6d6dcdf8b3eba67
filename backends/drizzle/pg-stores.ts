import { InvalidInputError } from 'keygate';
import {
  type PGliteLike,
  PostgresCreditLedger,
  PostgresDashboardStore,
  PostgresKeyStore,
  PostgresRateLimiter,
} from 'keygate/postgres';
import { checkOptionNames } from 'keygate/store-kit';
import type { Pool } from 'pg';
import {
  clientUnder,
  keyStoreHooks,
  STORES_OPTION_NAMES,
  type StoresOf,
  type StoresOptions,
  storesOf,
} from './stores.js';

/**
 * Options of {@link drizzlePgStores}.
 *
 * @example
 * const options: DrizzlePgStoresOptions = { schema: 'keygate', rateLimiterTimeoutMs: 100 };
 */
export interface DrizzlePgStoresOptions extends StoresOptions {
  /** The schema given to `keygatePgTables`. @default 'public' */
  schema?: string;
}

/**
 * keygate's stores over one Drizzle PostgreSQL database: the `keygate/postgres` classes, on the
 * driver under it. They share its connections and its schema.
 *
 * @example
 * const { keys, rateLimiter, credits, dashboard, audit, outbox } = drizzlePgStores(db, { schema: 'keygate' });
 */
export interface DrizzlePgStores
  extends StoresOf<PostgresKeyStore, PostgresRateLimiter, PostgresCreditLedger, PostgresDashboardStore> {}

/**
 * Builds keygate's stores over your Drizzle database, on the client under it (`db.$client`): a `pg`
 * Pool (`drizzle-orm/node-postgres`, given a Pool, a connection string or pool settings) or a PGlite
 * (`drizzle-orm/pglite`). The tables must exist already, made by drizzle-kit from `keygatePgTables`
 * and the custom migration of `keygatePgMigrationSql`: nothing here calls `migrate()` (and a later
 * `migrate()` of these stores changes nothing). Throws `InvalidInputError` naming `db` for another
 * driver: `drizzle-orm/postgres-js` is not supported (keygate needs `pg` or PGlite for its change
 * feed and transactions), nor is a db over a single `pg` Client (concurrent transactions would share
 * its one connection).
 *
 * @example
 * import { drizzle } from 'drizzle-orm/node-postgres';
 * const db = drizzle(new pg.Pool({ connectionString }), { schema });
 * const { keys, rateLimiter } = drizzlePgStores(db, { schema: 'keygate' });
 * const manager = new KeyManager({ store: keys });
 * app.use('/v1', apiKeyAuth({ store: new CachedKeyStore(keys), rateLimiter }));
 */
export function drizzlePgStores(db: { $client: unknown }, options: DrizzlePgStoresOptions = {}): DrizzlePgStores {
  checkOptionNames(options, [...STORES_OPTION_NAMES, ...['schema']], 'drizzlePgStores');
  const client = clientOf(db);
  const schema = options.schema ?? 'public';
  const keys = new PostgresKeyStore({
    client,
    schema,
    ...keyStoreHooks(options),
  });
  return storesOf({
    keys,
    rateLimiter: new PostgresRateLimiter({ client, schema, timeoutMs: options.rateLimiterTimeoutMs }),
    credits: new PostgresCreditLedger({ client, schema, timeoutMs: options.creditLedgerTimeoutMs }),
    dashboard: new PostgresDashboardStore({ client, schema }),
  });
}

/** The pg Pool or PGlite under a Drizzle db, or an `InvalidInputError` saying what is not supported. */
function clientOf(db: { $client: unknown }): Pool | PGliteLike {
  const { client, has } = clientUnder(db);
  if (has('query') && has('transaction') && has('listen')) return client as unknown as PGliteLike;
  if (has('connect') && has('query') && typeof client?.totalCount === 'number') return client as unknown as Pool;
  if (has('unsafe') && has('begin')) {
    throw new InvalidInputError(
      'db',
      'drizzle-orm/postgres-js is not supported: build the db with drizzle-orm/node-postgres over a pg Pool, or drizzle-orm/pglite',
    );
  }
  if (has('connect') && has('query')) {
    throw new InvalidInputError(
      'db',
      'a Drizzle db over a single pg Client is not supported: give drizzle-orm/node-postgres a pg Pool',
    );
  }
  throw new InvalidInputError(
    'db',
    'db must be a Drizzle database from drizzle-orm/node-postgres (over a pg Pool) or drizzle-orm/pglite',
  );
}
