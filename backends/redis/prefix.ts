import { InvalidInputError } from 'keygate';
import { quote } from 'keygate/store-kit';

/**
 * The `prefix` option of the Redis key store and dashboard store: a string of at most 100 characters
 * without white space; `'keygate:'` when absent. Anything else throws `InvalidInputError` naming `prefix`.
 *
 * @example
 * validPrefix(undefined)     // 'keygate:'
 * validPrefix('{keygate}:')  // '{keygate}:' (one hash tag: a cluster keeps every key in one slot)
 */
export function validPrefix(prefix: unknown = 'keygate:'): string {
  if (typeof prefix !== 'string' || prefix.length > 100 || /\s/.test(prefix)) {
    throw new InvalidInputError(
      'prefix',
      `prefix must be a string of at most 100 non-space characters, got ${quote(prefix)}`,
    );
  }
  return prefix;
}

/**
 * Whether every key that starts with `prefix` hashes to one Redis Cluster slot: the prefix holds a
 * hash tag, a `{` followed later by a `}` with at least one character between them.
 *
 * @example
 * hasHashTag('{keygate}:') // true
 * hasHashTag('keygate:')   // false
 * hasHashTag('{}keygate:') // false (an empty tag hashes the whole key)
 */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  return open >= 0 && prefix.indexOf('}', open + 1) > open + 1;
}

/**
 * The prefix of a key store or dashboard store: `'keygate:'` by default on one server, `'{keygate}:'`
 * on a Redis Cluster (`cluster` true), where the store's scripts touch records, indexes and queues of
 * many keys and accounts at once, so every key must share one slot. On a cluster, a prefix without a
 * hash tag is an `InvalidInputError` naming `prefix`.
 *
 * @example
 * storePrefix(undefined, false) // 'keygate:'
 * storePrefix(undefined, true)  // '{keygate}:'
 * storePrefix('app:', true)     // throws InvalidInputError (prefix)
 */
export function storePrefix(prefix: unknown, cluster: boolean | undefined): string {
  const valid = validPrefix(prefix ?? (cluster ? '{keygate}:' : 'keygate:'));
  if (cluster && !hasHashTag(valid)) {
    throw new InvalidInputError(
      'prefix',
      `on a Redis Cluster the store's prefix must hold a hash tag, such as '{keygate}:', got ${quote(valid)}`,
    );
  }
  return valid;
}
