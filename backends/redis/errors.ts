import { KeyStoreUnavailableError } from 'keygate';
import { quote } from 'keygate/store-kit';

/**
 * A failure of the Redis client as `KeyStoreUnavailableError`, with the client's error as `cause`.
 * No raw key ever reaches Redis, and `quote` would cut one out of the message anyway.
 */
export function unavailable(err: unknown): KeyStoreUnavailableError {
  const message = err instanceof Error ? err.message : String(err);
  return new KeyStoreUnavailableError(`Redis key store failed: ${quote(message)}`, err);
}
