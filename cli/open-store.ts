import { InvalidInputError } from 'keygate';
import { quote, type UsageStore, type WritableKeyStore } from 'keygate/store-kit';

/** A store opened by the CLI, with the function that releases its connections. */
export interface OpenedStore {
  readonly store: WritableKeyStore & Partial<UsageStore>;
  readonly describe: string;
  close(): Promise<void>;
}

/** The store the CLI uses when neither `--store` nor `KEYGATE_STORE` is given. */
export const DEFAULT_STORE = 'pglite:./.keygate';

/**
 * Opens the store a URL names: `pglite:<dir>` (embedded PostgreSQL in a folder), `postgres://…` or
 * `postgresql://…` (a PostgreSQL server), `redis://…` or `rediss://…`. SQL stores are migrated on open.
 * Drivers are loaded only when their scheme is used, so each stays an optional dependency.
 *
 * @example
 * const { store, close } = await openStore('pglite:./.keygate');
 */
export async function openStore(url: string): Promise<OpenedStore> {
  if (url.startsWith('pglite:')) {
    const dir = url.slice('pglite:'.length);
    if (dir === '') throw new InvalidInputError('store', 'pglite: needs a folder, e.g. pglite:./.keygate');
    const [{ PGlite }, { PostgresKeyStore }] = await Promise.all([
      import('@electric-sql/pglite'),
      import('keygate/postgres'),
    ]);
    const client = new PGlite(dir);
    const store = new PostgresKeyStore({ client });
    await store.migrate();
    return { store, describe: `PGlite in ${dir}`, close: () => closeAll(store, () => client.close()) };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const [pg, { PostgresKeyStore }] = await Promise.all([import('pg'), import('keygate/postgres')]);
    const Pool = (pg as unknown as { default?: typeof import('pg') }).default?.Pool ?? pg.Pool;
    const pool = new Pool({ connectionString: url, max: 2 });
    const store = new PostgresKeyStore({ client: pool });
    await store.migrate();
    return { store, describe: 'PostgreSQL', close: () => closeAll(store, () => pool.end()) };
  }
  if (/^rediss?:\/\//.test(url)) {
    const [{ createClient }, { RedisKeyStore }] = await Promise.all([import('redis'), import('keygate/redis')]);
    const client = createClient({ url, socket: { reconnectStrategy: false } });
    client.on('error', () => {});
    await client.connect();
    const store = new RedisKeyStore({ client: client as never });
    return { store, describe: 'Redis', close: () => closeAll(store, () => client.close()) };
  }
  throw new InvalidInputError('store', `unknown store ${quote(url)}; use pglite:<dir>, postgres://… or redis://…`);
}

async function closeAll(store: unknown, end: () => Promise<unknown>): Promise<void> {
  const closable = store as { close?: () => Promise<void> | void };
  await closable.close?.();
  await end();
}
