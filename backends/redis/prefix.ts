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
