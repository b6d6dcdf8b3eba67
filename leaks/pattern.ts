import { InvalidInputError } from '#errors';
import { assertPrefix, CHECKSUM_LENGTH, DEFAULT_PREFIX, RANDOM_LENGTH } from '../src/key/format.js';
import { checkOptionNames } from '../src/validate/options.js';

/**
 * The regular expression an operator hands GitHub for the secret scanning partner program: the key
 * format of `generateKey` (`<prefix>_live_` or `<prefix>_test_`, then 32 random and 6 checksum base62
 * characters), whole words only. With `{ mode: 'live' }`, live keys only. Throws `InvalidInputError`
 * naming `prefix` for a prefix `generateKey` would refuse, `mode` for another mode, or a member that
 * is neither (reason `unknown_option`).
 *
 * @param options.prefix the keys' prefix. @default 'mk'
 * @param options.mode which keys: `'live'`, `'test'` or both. @default both
 * @example
 * secretScanningPattern()                   // '\\b(mk_(?:live|test)_[0-9A-Za-z]{38})\\b'
 * secretScanningPattern({ mode: 'live' })   // '\\b(mk_live_[0-9A-Za-z]{38})\\b'
 */
export function secretScanningPattern(options: { prefix?: string; mode?: 'live' | 'test' } = {}): string {
  checkOptionNames(options, ['prefix', 'mode'], 'secretScanningPattern');
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  assertPrefix(prefix);
  const given = options.mode;
  if (given !== undefined && given !== 'live' && given !== 'test') {
    throw new InvalidInputError('mode', 'mode must be "live", "test" or left out (both)');
  }
  const mode = given ?? '(?:live|test)';
  return `\\b(${prefix}_${mode}_[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}})\\b`;
}
