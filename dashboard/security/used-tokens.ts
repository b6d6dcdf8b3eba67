import { InvalidInputError } from 'keygate';
import { findStore } from '../stores.js';

/**
 * Where the dashboard records single-use tokens (redeemed sign-in links, ended sessions) so that a
 * token used once is refused everywhere, by every process sharing the store. `MemoryKeyStore`,
 * `PostgresKeyStore` (and PGlite) and `RedisKeyStore` have these two methods; the dashboard finds
 * them on the manager's store. A record may be forgotten once its `expiresAt` has passed, since the
 * token it names no longer verifies by then.
 *
 * @example
 * const store: UsedTokenStore = new MemoryKeyStore();
 * await store.markTokenUsed('sign-in:abc', new Date(Date.now() + 900_000).toISOString()); // true
 * await store.markTokenUsed('sign-in:abc', new Date(Date.now() + 900_000).toISOString()); // false: used
 */
export interface UsedTokenStore {
  /**
   * Records `tokenId` as used until `expiresAt` (ISO-8601). Resolves true when this call recorded
   * it, false when it was recorded before: atomic, so of two concurrent calls exactly one gets true.
   */
  markTokenUsed(tokenId: string, expiresAt: string): Promise<boolean>;
  /** True when `tokenId` is recorded and its `expiresAt` has not passed. */
  isTokenUsed(tokenId: string): Promise<boolean>;
}

/**
 * True when `value` has `markTokenUsed` and `isTokenUsed`.
 *
 * @example
 * isUsedTokenStore(new MemoryKeyStore()) // true
 */
export function isUsedTokenStore(value: unknown): value is UsedTokenStore {
  const v = value as Partial<UsedTokenStore> | null | undefined;
  return !!v && typeof v.markTokenUsed === 'function' && typeof v.isTokenUsed === 'function';
}

/**
 * The ledger of used tokens: the one given, else the manager's store, else the store under a
 * `CachedKeyStore` (its `store`). Throws `InvalidInputError` (field `usedTokens`) when there is none:
 * without a shared record a link could be replayed on another process, so the dashboard refuses to start.
 */
export function findUsedTokenStore(given: unknown, store: unknown): UsedTokenStore {
  if (given !== undefined) {
    if (!isUsedTokenStore(given)) {
      throw new InvalidInputError(
        'usedTokens',
        'usedTokens must have markTokenUsed(tokenId, expiresAt) and isTokenUsed(tokenId)',
      );
    }
    return given;
  }
  const found = findStore(store, isUsedTokenStore);
  if (found) return found;
  throw new InvalidInputError(
    'usedTokens',
    "the manager's store cannot record used sign-in links (markTokenUsed, isTokenUsed); pass usedTokens, or use MemoryKeyStore, PostgresKeyStore or RedisKeyStore",
  );
}
