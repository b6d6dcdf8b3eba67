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
 * A client failure as `KeyStoreUnavailableError`, with the client's error as `cause`. No raw key ever
 * reaches the database, and `quote` would cut one out of the message anyway.
 */
export function unavailable(err: unknown): KeyStoreUnavailableError {
  const message = err instanceof Error ? err.message : String(err);
  return new KeyStoreUnavailableError(`PostgreSQL key store failed: ${quote(message)}`, err);
}

/** The SQLSTATE of a client error, as `pg` and PGlite both report it (`code`). */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
