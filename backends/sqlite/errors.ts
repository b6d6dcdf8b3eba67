import { KeygateError, KeyStoreUnavailableError } from 'keygate';
import { quote } from 'keygate/store-kit';

/**
 * The error a store method throws for `err`: keygate's own errors (not found, revoked, conflict) as
 * they are; anything SQLite threw (SQLITE_BUSY past the busy timeout, an I/O error, a closed database)
 * becomes `KeyStoreUnavailableError` with SQLite's error as `cause`.
 *
 * @example
 * try { driver.run(sql, params) } catch (err) { throw storeError(err) }
 */
export function storeError(err: unknown): KeygateError {
  if (err instanceof KeygateError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new KeyStoreUnavailableError(`SQLite key store failed: ${quote(message)}`, err);
}

/**
 * Runs `work` and turns whatever SQLite throws into a keygate error (see {@link storeError}); the
 * answer comes back as a promise, as the store interfaces want.
 *
 * @example
 * return guarded(() => driver.get(sql, [hash]));
 */
export function guarded<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(storeError(err));
  }
}
