import type { PGlite } from '@electric-sql/pglite';
import { load, lockFolder } from './folder-lock.js';
import { PostgresKeyStore, type PostgresKeyStoreOptions } from './store.js';

/**
 * An embedded PGlite database in a folder, held by this process alone.
 *
 * @example
 * const folder: PGliteFolder = await openPGliteFolder('./.keygate');
 * await folder.close(); // releases the lock
 */
export interface PGliteFolder {
  /** A `PostgresKeyStore` on `client`, migrated. */
  readonly store: PostgresKeyStore;
  /** The PGlite instance, for tables of your own beside the keys (one writer: this process). */
  readonly client: PGlite;
  /** Closes the store and the database, then releases the folder. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens PGlite in `dir` for this process alone (Node only). PGlite has no server to arbitrate between
 * processes: two processes on one folder each keep their own copy in memory, and one silently undoes
 * the other's writes (a revocation lost at shutdown). So the folder gets a lock file first; another
 * live process holding it is refused, and a lock left by a process that is gone is taken over.
 * The folder is created 0700 when missing. Loads `@electric-sql/pglite` (an optional peer) on call.
 *
 * @param dir the folder (created when missing).
 * @param options the store's options other than `client` (`schema`, `onError`).
 * @throws StoreLockedError (`code: 'store_locked'`, `holderPid`) when another live process holds `dir`.
 * @example
 * import { openPGliteFolder } from 'keygate/postgres';
 * const { store, client, close } = await openPGliteFolder('./.keygate');
 * const keys = new KeyManager({ store });
 * process.once('SIGTERM', () => close());
 */
export async function openPGliteFolder(
  dir: string,
  options: Omit<PostgresKeyStoreOptions, 'client'> = {},
): Promise<PGliteFolder> {
  // The driver first: without it, nothing is created (no folder, no lock file).
  const { PGlite } = await load<typeof import('@electric-sql/pglite')>('@electric-sql/pglite');
  const lock = await lockFolder(dir);
  let client: PGlite | undefined;
  try {
    client = new PGlite(dir);
    const store = new PostgresKeyStore({ ...options, client });
    await store.migrate();
    return { store, client, close: closer(store, client, lock.release) };
  } catch (err) {
    await client?.close().catch(() => {});
    await lock.release();
    throw err;
  }
}

function closer(store: PostgresKeyStore, client: PGlite, release: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      try {
        await store.close();
        await client.close();
      } finally {
        await release();
      }
    })();
    return closing;
  };
}
