import { InvalidInputError, StoreLockedError } from 'keygate';
import { quote, type WritableKeyStore } from 'keygate/store-kit';

/** A store opened by the CLI, with the function that releases its connections. */
export interface OpenedStore {
  readonly store: WritableKeyStore;
  close(): Promise<void>;
}

/** The store the CLI uses when neither `--store` nor `KEYGATE_STORE` is given. */
export const DEFAULT_STORE = 'pglite:./.keygate';

/**
 * Opens the store a URL names: `pglite:<dir>` (embedded PostgreSQL in a folder, locked for this
 * process), `postgres://…` or `postgresql://…` (a PostgreSQL server; `?schema=NAME` keeps the tables
 * in that schema, default `public`), `redis://…` or `rediss://…` (`?prefix=P` puts every key under
 * `P`, default the store's own). SQL stores are migrated on open. Drivers load only when their scheme
 * is used, so each stays an optional dependency.
 *
 * @throws StoreLockedError when another live process (a running service) holds the PGlite folder.
 * @example
 * const { store, close } = await openStore('pglite:./.keygate');
 * await openStore('postgres://app@db.internal/keys?schema=keygate');
 */
export async function openStore(url: string): Promise<OpenedStore> {
  if (url.startsWith('pglite:')) return openPGlite(url.slice('pglite:'.length));
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url);
  if (/^rediss?:\/\//.test(url)) return openRedis(url);
  throw new InvalidInputError('store', `unknown store ${quote(url)}; use pglite:<dir>, postgres://… or redis://…`);
}

async function openPGlite(dir: string): Promise<OpenedStore> {
  if (dir === '') throw new InvalidInputError('store', 'pglite: needs a folder, e.g. pglite:./.keygate');
  const { openPGliteFolder } = await import('keygate/postgres');
  try {
    const { store, close } = await openPGliteFolder(dir);
    return { store, close };
  } catch (err) {
    if (!(err instanceof StoreLockedError)) throw err;
    // The holder is most likely the service running on this folder: say what to use instead.
    throw new StoreLockedError(
      err.path,
      err.holderPid,
      `${err.message}. Stop that process first, or change keys through it (its dashboard), ` +
        'or keep keys in a database server both can share: --store postgres://… or redis://…',
    );
  }
}

/**
 * Takes keygate's own parameter `name` out of a store URL, so the driver never sees it.
 *
 * @returns the URL without it, and its value (undefined when absent)
 */
function ownParameter(url: string, name: string): { url: string; value: string | undefined } {
  const parsed = new URL(url);
  const value = parsed.searchParams.get(name) ?? undefined;
  parsed.searchParams.delete(name);
  return { url: parsed.toString(), value };
}

async function openPostgres(given: string): Promise<OpenedStore> {
  const { url, value: schema } = ownParameter(given, 'schema');
  const [pg, { PostgresKeyStore }] = await Promise.all([import('pg'), import('keygate/postgres')]);
  const Pool = (pg as unknown as { default?: typeof import('pg') }).default?.Pool ?? pg.Pool;
  // A pool connects on its first query: a bad schema name throws here with nothing opened.
  const pool = new Pool({ connectionString: url, max: 2 });
  const store = new PostgresKeyStore({ client: pool, ...(schema === undefined ? {} : { schema }) });
  try {
    await store.migrate();
  } catch (err) {
    await closeAll(store, () => pool.end()).catch(() => {});
    throw err;
  }
  return { store, close: () => closeAll(store, () => pool.end()) };
}

async function openRedis(given: string): Promise<OpenedStore> {
  const { url, value: prefix } = ownParameter(given, 'prefix');
  const [{ createClient }, { RedisKeyStore }] = await Promise.all([import('redis'), import('keygate/redis')]);
  const client = createClient({ url, socket: { reconnectStrategy: false } });
  client.on('error', () => {});
  await client.connect();
  const store = new RedisKeyStore({ client: client as never, ...(prefix === undefined ? {} : { prefix }) });
  return { store, close: () => closeAll(store, () => client.close()) };
}

async function closeAll(store: { close(): void }, end: () => Promise<unknown>): Promise<void> {
  store.close();
  await end();
}
