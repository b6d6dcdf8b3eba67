import { InvalidInputError } from '#errors';
import { quote } from '../redact/describe.js';
import type { KeyRateLimit, NamedRateLimit, RateLimit } from '../types.js';
import { checkOptionNames } from '../validate/options.js';
import { checkRateLimit } from './policy.js';

/** The most named limits one key (or one account) is held to: 10. */
export const MAX_NAMED_LIMITS = 10;

// A name travels in the header fields as a quoted string: these characters need no escaping there.
const NAME = /^[A-Za-z0-9_.-]{1,32}$/;
const NAMED_FIELDS = ['name', 'limit', 'windowMs'];

function checkNamed(value: unknown, field: string, seen: Map<string, number>, index: number): NamedRateLimit {
  // A member of another name first: a misspelt `windowms` is named, with "did you mean `windowMs`?".
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    checkOptionNames(value, NAMED_FIELDS, 'a named rate limit', field);
  }
  const { limit, windowMs } = checkRateLimit(value, field);
  const { name } = value as Partial<NamedRateLimit>;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new InvalidInputError(
      `${field}.name`,
      `${field}.name must be 1-32 letters, digits, "_", "-" or ".", got ${quote(name)}`,
    );
  }
  const earlier = seen.get(name);
  if (earlier !== undefined) {
    throw new InvalidInputError(`${field}.name`, `${field}.name repeats the name of entry ${earlier}: "${name}"`);
  }
  seen.set(name, index);
  return Object.freeze({ name, limit, windowMs });
}

/**
 * Checks a key's (or an account's) rate limit: one `{ limit, windowMs }`, or a list of 1 to 10
 * `{ name, limit, windowMs }` with unique names of 1-32 letters, digits, `_`, `-` or `.`. Returns a
 * frozen copy holding exactly those fields. Errors name the field at fault: `<prefix>`,
 * `<prefix>.limit`, `<prefix>[1].name`, ...
 *
 * @example
 * checkKeyRateLimit([{ name: 'burst', limit: 10, windowMs: 1000 }], 'rateLimit'); // the list, frozen
 */
export function checkKeyRateLimit(value: unknown, prefix: string): KeyRateLimit {
  if (!Array.isArray(value)) {
    const { limit, windowMs } = checkRateLimit(value, prefix, true);
    return Object.freeze({ limit, windowMs });
  }
  if (value.length === 0 || value.length > MAX_NAMED_LIMITS) {
    throw new InvalidInputError(
      prefix,
      `${prefix} must hold 1 to ${MAX_NAMED_LIMITS} named limits, got ${value.length}${value.length === 0 ? ' (null means none of its own)' : ''}`,
    );
  }
  const seen = new Map<string, number>();
  return Object.freeze(value.map((entry, i) => checkNamed(entry, `${prefix}[${i}]`, seen, i)));
}

/**
 * The limits of a {@link KeyRateLimit}, each with its name: a single `{ limit, windowMs }` is named
 * `single` (`"default"` for a key's, `"account"` for an account's).
 *
 * @example
 * namedLimits({ limit: 10, windowMs: 1000 }, 'default'); // [{ name: 'default', limit: 10, windowMs: 1000 }]
 */
export function namedLimits(value: KeyRateLimit, single: string): readonly NamedRateLimit[] {
  if (Array.isArray(value)) return value as readonly NamedRateLimit[];
  const { limit, windowMs } = value as RateLimit;
  return [{ name: single, limit, windowMs }];
}
