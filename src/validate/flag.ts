import { InvalidInputError } from '#errors';
import { quote } from '../redact/describe.js';

/**
 * `value` as a boolean option, `true` when it is undefined; anything else is an `InvalidInputError`
 * naming `field`.
 *
 * @example
 * flag('prefetch', options.prefetch); // true
 */
export function flag(field: string, value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'boolean')
    throw new InvalidInputError(field, `${field} must be true or false, got ${quote(value)}`);
  return value;
}
