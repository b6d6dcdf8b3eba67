import type { KeyRateLimit, PublicKey } from '../types.js';
import { checkKeyRateLimit } from './named.js';
import type { ResolvedRateLimit } from './options.js';

// What a `rateLimit.account` function returned, checked once per object it returns (a plan table
// hands out the same few objects): the checked copy, or null when the object is no rate limit.
const checked = new WeakMap<object, KeyRateLimit | null>();

function check(value: object): KeyRateLimit | null {
  let limit = checked.get(value);
  if (limit === undefined) {
    try {
      limit = checkKeyRateLimit(value, 'rateLimit.account');
    } catch {
      limit = null;
    }
    checked.set(value, limit);
  }
  return limit;
}

/**
 * The account limits that apply to `key`: the option's own (checked when the options were), what its
 * function returns for the key (null or undefined: none), or undefined when the function threw or
 * returned something that is not a rate limit (the request then fails closed).
 *
 * @example
 * accountLimitOf((key) => plans[key.accountId] ?? null, key); // { limit: 1000, windowMs: 86_400_000 } or null
 */
export function accountLimitOf(option: ResolvedRateLimit['account'], key: PublicKey): KeyRateLimit | null | undefined {
  if (typeof option !== 'function') return option;
  let value: unknown;
  try {
    value = option(key);
  } catch {
    return undefined;
  }
  if (value === null || value === undefined) return null;
  return typeof value === 'object' ? (check(value) ?? undefined) : undefined;
}
