import { KeygateError, KeyStoreUnavailableError } from 'keygate';
import { quote } from 'keygate/store-kit';

/**
 * The error a store method throws for `err`: keygate's own errors (not found, revoked, conflict) as
 * they are; anything the database client threw becomes `KeyStoreUnavailableError` (see `unavailable`).
 */
export function storeError(err: unknown): KeygateError {
  return err instanceof KeygateError ? err : unavailable(err);
}

/**
 * A client failure as `KeyStoreUnavailableError`, with the client's error as `cause`. `mysql2` puts
 * the statement on its errors with the values written in; that copy goes (a webhook secret or a
 * digest has no business in a log line), and `quote` cuts a raw key out of the message anyway.
 */
export function unavailable(err: unknown): KeyStoreUnavailableError {
  if (err && typeof err === 'object' && 'sql' in err) delete (err as { sql?: unknown }).sql;
  const message = err instanceof Error ? err.message : String(err);
  return new KeyStoreUnavailableError(`MySQL key store failed: ${quote(message)}`, err);
}

/** The server's error number of a client error (`errno`: 1062 a duplicate key, 1213 a deadlock), if any. */
export function errnoOf(err: unknown): number | undefined {
  const errno = (err as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}

/** A duplicate entry for a unique key. */
export const ER_DUP_ENTRY = 1062;
