import type { InputIssue, InputIssueReason } from '#errors';
import { normalizeAllowList } from '../ip/allow-list.js';
import { checkKeyRateLimit } from '../rate-limit/named.js';
import type { KeyRateLimit } from '../types.js';
import { attempt, refuse } from '../validate/issues.js';

// The write-time checks of a key's fields that lean on the request path's own parsers (the allow
// list's, the rate limit's), so that a key is refused at write exactly when it could not be enforced.

/** Allow-list entries, strictly parsed and canonicalised; every bad entry reported, with its index. */
export function validAllowList(value: unknown): string[] {
  return normalizeAllowList(value, 'allowedIps');
}

/**
 * A key's own rate limit: `null` or absent for none; exactly `{ limit, windowMs }` with `limit` a
 * whole number >= 1 and `windowMs` a number of milliseconds > 0 (at most 366 days); or a list of 1 to
 * 10 such limits, each with a unique `name` (1-32 letters, digits, `_`, `-` or `.`). Errors name
 * `rateLimit`, `rateLimit.limit`, `rateLimit[1].name`, ... or the unknown member.
 */
export function validRateLimit(value: unknown): KeyRateLimit | null {
  if (value === null || value === undefined) return null;
  const checked = attempt(() => checkKeyRateLimit(value, 'rateLimit'));
  if (!checked.ok) {
    const { field, message, reason } = checked.issues[0] as InputIssue;
    // An unknown member keeps its own reason (`unknown_option`, from checkOptionNames).
    refuse(field, reason === 'unknown_option' ? reason : rateLimitReason(value, field, message), message);
  }
  return checked.value;
}

// Why `checkKeyRateLimit` refused `field` of `value` (it names the field; the request path's copy of
// it stays small, so the reason is worked out here, where keys are written).
function rateLimitReason(value: unknown, field: string, message: string): InputIssueReason {
  if (field === 'rateLimit') return Array.isArray(value) ? 'too_many' : 'wrong_type';
  const match = /^rateLimit(?:\[(\d+)\])?(?:\.(\w+))?$/.exec(field);
  const entry = match?.[1] === undefined ? value : (value as unknown[])[Number(match[1])];
  const member = match?.[2];
  if (member === undefined) return 'wrong_type';
  if (member === 'name') return message.includes('repeats') ? 'not_allowed' : 'invalid';
  if (member !== 'limit' && member !== 'windowMs') return 'not_allowed';
  return typeof (entry as Record<string, unknown>)[member] === 'number' ? 'out_of_range' : 'wrong_type';
}
