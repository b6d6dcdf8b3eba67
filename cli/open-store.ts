import { type CreditLedger, InvalidInputError, StoreLockedError } from 'keygate';
import { quote, type WritableKeyStore } from 'keygate/store-kit';

/** A store opened by the CLI, with the function that releases its connections. */
export interface OpenedStore {
  readonly store: WritableKeyStore;
  /**
   * The credit ledger over the same database and connection: `PostgresCreditLedger` in the store's
   * schema (migrated on first call), or `RedisCreditLedger` under `<prefix>credits:` (the store's
   * prefix, default `keygate:`, so `keygate:credits:`, the ledger's own default).
   */
  ledger(): Promise<CreditLedger>;
  close(): Promise<void>;
}

/**
 * How long one ledger call of the CLI may take, in milliseconds: 10,000. Longer than a service's
 * (1,000): a person waits on it, the database may be far away, and `reconcile` reads every entry.
 */
export const CLI_LEDGER_TIMEOUT_MS = 10_000;

/** The store the CLI uses when neither `--store` nor `KEYGATE_STORE` is given. */
export const DEFAULT_STORE = 'pglite:./.keygate';

/**
 * Opens the store a URL names: `pglite:<dir>` (embedded PostgreSQL in a folder, locked for this
 * process), `postgres://…` or `postgresql://…` (a PostgreSQL server; `?schema=NAME` keeps the tables
 * in that schema, default `public`), `redis://…` or `rediss://…` (`?prefix=P` puts every key under
 * `P`, default the store's own). SQL stores are migrated on open. Drivers load only when their scheme
 * is used, so each stays an optional dependency. The credit ledger opens on its first use, over the
 * same connection.
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
  const { openPGliteFolder, PostgresCreditLedger } = await import('keygate/postgres');
  try {
    const { store, client, close } = await openPGliteFolder(dir);
    const ledger = once(() => migrated(new PostgresCreditLedger({ client, timeoutMs: CLI_LEDGER_TIMEOUT_MS })));
    return { store, ledger, close };
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
  const [pg, { PostgresKeyStore, PostgresCreditLedger }] = await Promise.all([
    import('pg'),
    import('keygate/postgres'),
  ]);
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
  const ledger = once(() =>
    migrated(
      new PostgresCreditLedger({
        client: pool,
        timeoutMs: CLI_LEDGER_TIMEOUT_MS,
        ...(schema === undefined ? {} : { schema }),
      }),
    ),
  );
  return { store, ledger, close: () => closeAll(store, () => pool.end()) };
}

async function openRedis(given: string): Promise<OpenedStore> {
  const { url, value: prefix } = ownParameter(given, 'prefix');
  const [{ createClient }, { RedisKeyStore, RedisCreditLedger }] = await Promise.all([
    import('redis'),
    import('keygate/redis'),
  ]);
  const client = createClient({ url, socket: { reconnectStrategy: false } });
  client.on('error', () => {});
  await client.connect();
  const store = new RedisKeyStore({ client: client as never, ...(prefix === undefined ? {} : { prefix }) });
  const ledger = once(async () => {
    const credits = `${store.prefix}credits:`;
    return new RedisCreditLedger({ client: client as never, prefix: credits, timeoutMs: CLI_LEDGER_TIMEOUT_MS });
  });
  return { store, ledger, close: () => closeAll(store, () => client.close()) };
}

async function closeAll(store: { close(): void }, end: () => Promise<unknown>): Promise<void> {
  store.close();
  await end();
}

async function migrated<L extends { migrate(): Promise<void> }>(ledger: L): Promise<L> {
  await ledger.migrate();
  return ledger;
}

/** `open` called on first use only; every later call shares its promise. */
function once<T>(open: () => Promise<T>): () => Promise<T> {
  let opened: Promise<T> | undefined;
  return () => {
    opened ??= open();
    return opened;
  };
}
