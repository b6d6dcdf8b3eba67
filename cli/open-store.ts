import {
  type CreditLedger,
  InvalidInputError,
  KeygateError,
  KeyStoreUnavailableError,
  StoreLockedError,
  UnsupportedError,
} from 'keygate';
import { closestName, type WritableKeyStore } from 'keygate/store-kit';
import { describeStoreUrl, maskUserinfo, schemeOf } from './store-url.js';

/** A store opened by the CLI, with the function that releases its connections. */
export interface OpenedStore {
  readonly store: WritableKeyStore;
  /**
   * The credit ledger over the same database and connection: `PostgresCreditLedger` in the store's
   * schema, `MysqlCreditLedger` with the store's table prefix, `SqliteCreditLedger` in the same file
   * (each migrated on first call), or `RedisCreditLedger` under `<prefix>credits:` (the store's
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

/** Every scheme the CLI opens, for "did you mean" and for the message that lists them. */
const SCHEMES = ['pglite', 'sqlite', 'postgres', 'postgresql', 'mysql', 'mariadb', 'redis', 'rediss'] as const;

const KINDS = 'pglite:<dir>, sqlite:<file>, postgres://…, mysql://… (or mariadb://…) or redis://…';

/**
 * Opens the store a URL names: `pglite:<dir>` (embedded PostgreSQL in a folder, locked for this
 * process), `sqlite:<file>` (a SQLite file: `sqlite:keys.db` and `sqlite:./data/keys.db` are relative
 * to the working folder, `sqlite:/var/lib/keys.db` and `sqlite:///var/lib/keys.db` absolute),
 * `postgres://…` or `postgresql://…` (a PostgreSQL server; `?schema=NAME` keeps the tables in that
 * schema, default `public`), `mysql://…` or `mariadb://…` (a MySQL 8 or MariaDB 10.6+ server, tables in
 * the URL's database; `?prefix=P` starts every table name with `P`, default `keygate_`), `redis://…` or
 * `rediss://…` (`?prefix=P` puts every key under `P`, default the store's own). SQL stores are migrated
 * on open. Drivers load only when their scheme is used, so each stays an optional dependency; a
 * missing one is an `unsupported` error naming the package to install. The credit ledger opens on its
 * first use, over the same connection. Every error names the store as {@link describeStoreUrl} shows
 * it: never its password.
 *
 * @throws StoreLockedError when another live process (a running service) holds the PGlite folder.
 * @example
 * const { store, close } = await openStore('pglite:./.keygate');
 * await openStore('postgres://app@db.internal/keys?schema=keygate');
 * await openStore('sqlite:./keygate.db');
 */
export async function openStore(url: string): Promise<OpenedStore> {
  const open = openerOf(url);
  try {
    return await open();
  } catch (err) {
    throw openFailure(url, err);
  }
}

function openerOf(url: string): () => Promise<OpenedStore> {
  const scheme = schemeOf(url);
  if (scheme === 'pglite:') return () => openPGlite(url.slice('pglite:'.length));
  if (scheme === 'sqlite:') return () => openSqlite(sqlitePath(url.slice('sqlite:'.length)));
  if (/^postgres(ql)?:\/\//i.test(url)) return () => openPostgres(url);
  if (/^(mysql|mariadb):\/\//i.test(url)) return () => openMysql(url);
  if (/^rediss?:\/\//i.test(url)) return () => openRedis(url);
  if (scheme === undefined) {
    throw new InvalidInputError('store', `a store URL starts with its kind: ${KINDS}`);
  }
  const near = closestName(scheme.slice(0, -1), SCHEMES);
  const hint = near === undefined ? '' : ` Did you mean ${near}:${near.endsWith('lite') ? '' : '//'}…?`;
  throw new InvalidInputError(
    'store',
    `unknown store ${describeStoreUrl(url)} (scheme ${scheme}).${hint} The CLI opens ${KINDS}`,
  );
}

// A failure to open says which store failed, password masked: a driver's own message rarely does.
function openFailure(url: string, err: unknown): unknown {
  if (err instanceof KeygateError && !(err instanceof KeyStoreUnavailableError)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new KeyStoreUnavailableError(
    `could not open the store ${describeStoreUrl(url)}: ${maskUserinfo(message)}`,
    err instanceof KeyStoreUnavailableError ? (err.cause ?? err) : err,
  );
}

/**
 * Loads an optional driver, or throws `UnsupportedError` (field `store`) naming the package to
 * install when it is missing; any other failure of the import passes through.
 *
 * @example
 * const pg = await loadDriver('pg', 'postgres://', () => import('pg'));
 */
export async function loadDriver<T>(pkg: string, scheme: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!isMissing(err, pkg)) throw err;
    throw new UnsupportedError('store', `${scheme} stores need the ${pkg} package: npm install ${pkg}`);
  }
}

function isMissing(err: unknown, pkg: string): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown };
  const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
  return missing && typeof message === 'string' && message.includes(`'${pkg}`);
}

async function openPGlite(dir: string): Promise<OpenedStore> {
  if (dir === '') throw new InvalidInputError('store', 'pglite: needs a folder, e.g. pglite:./.keygate');
  // The driver first, so that a missing one creates nothing (no folder, no lock file).
  await loadDriver('@electric-sql/pglite', 'pglite:', () => import('@electric-sql/pglite'));
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
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError('store', `cannot open ${describeStoreUrl(url)}`);
  }
  const value = parsed.searchParams.get(name) ?? undefined;
  parsed.searchParams.delete(name);
  return { url: parsed.toString(), value };
}

async function openPostgres(given: string): Promise<OpenedStore> {
  const { url, value: schema } = ownParameter(given, 'schema');
  const [pg, { PostgresKeyStore, PostgresCreditLedger }] = await Promise.all([
    loadDriver('pg', 'postgres://', () => import('pg')),
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
    loadDriver('redis', 'redis://', () => import('redis')),
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

async function openMysql(given: string): Promise<OpenedStore> {
  // mysql2 reads any URL; `mariadb:` is the same server protocol under its own name.
  const { url, value: prefix } = ownParameter(given.replace(/^mariadb:/i, 'mysql:'), 'prefix');
  const [mysql, { MysqlKeyStore, MysqlCreditLedger }] = await Promise.all([
    loadDriver('mysql2', 'mysql://', () => import('mysql2/promise')),
    import('keygate/mysql'),
  ]);
  const createPool = (mysql as unknown as { default?: typeof mysql }).default?.createPool ?? mysql.createPool;
  const tables = prefix === undefined ? {} : { tablePrefix: prefix };
  // A pool connects on its first query; a bad prefix throws in the constructor, and the pool is ended.
  const pool = createPool({ uri: url, connectionLimit: 2 });
  let store: InstanceType<typeof MysqlKeyStore> | undefined;
  try {
    store = new MysqlKeyStore({ client: pool, ...tables });
    await store.migrate();
  } catch (err) {
    store?.close();
    await pool.end().catch(() => {});
    throw err;
  }
  const opened = store;
  const ledger = once(() =>
    migrated(new MysqlCreditLedger({ client: pool, timeoutMs: CLI_LEDGER_TIMEOUT_MS, ...tables })),
  );
  return { store: opened, ledger, close: () => closeAll(opened, () => pool.end()) };
}

/**
 * The file a `sqlite:` URL names (what follows `sqlite:`): a path as written (`keys.db`,
 * `./data/keys.db`, `/var/lib/keys.db`), or in URL form with an empty host (`sqlite:///var/lib/keys.db`,
 * percent-escapes decoded). In-memory databases (`:memory:`, an empty name) end with the command, so
 * they are refused, as is a host (`sqlite://host/…`) or a query string in URL form.
 */
function sqlitePath(rest: string): string {
  const example = 'e.g. sqlite:./keygate.db or sqlite:///var/lib/keygate.db';
  if (rest === '' || rest === ':memory:' || rest.startsWith('file::memory:')) {
    throw new InvalidInputError(
      'store',
      `sqlite: needs a file (an in-memory database would be gone when the command ends), ${example}`,
    );
  }
  if (!rest.startsWith('//')) return rest;
  if (!rest.startsWith('///') || /[?#]/.test(rest)) {
    throw new InvalidInputError('store', `a sqlite:// URL takes no host and no parameters, ${example}`);
  }
  try {
    return decodeURIComponent(rest.slice(2));
  } catch {
    throw new InvalidInputError('store', `the sqlite: path has a bad %-escape, ${example}`);
  }
}

type SqliteDatabase = import('keygate/sqlite').SqliteDatabase & { close(): unknown };

// better-sqlite3 where installed; else Node's own node:sqlite (22.5 and later).
async function openSqliteFile(path: string): Promise<SqliteDatabase> {
  try {
    const mod = (await import('better-sqlite3')) as unknown as { default: new (file: string) => SqliteDatabase };
    return new mod.default(path);
  } catch (err) {
    if (!isMissing(err, 'better-sqlite3')) throw err;
  }
  let DatabaseSync: new (file: string) => SqliteDatabase;
  try {
    ({ DatabaseSync } = (await import('node:sqlite' as string)) as { DatabaseSync: typeof DatabaseSync });
  } catch {
    throw new UnsupportedError(
      'store',
      'sqlite: stores need the better-sqlite3 package (npm install better-sqlite3), or Node 22.5+ for node:sqlite',
    );
  }
  return new DatabaseSync(path);
}

async function openSqlite(path: string): Promise<OpenedStore> {
  const { SqliteKeyStore, SqliteCreditLedger } = await import('keygate/sqlite');
  const database = await openSqliteFile(path);
  const store = new SqliteKeyStore({ database });
  try {
    await store.migrate();
  } catch (err) {
    await closeAll(store, async () => database.close()).catch(() => {});
    throw err;
  }
  const ledger = once(() => migrated(new SqliteCreditLedger({ database, timeoutMs: CLI_LEDGER_TIMEOUT_MS })));
  return { store, ledger, close: () => closeAll(store, async () => database.close()) };
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
