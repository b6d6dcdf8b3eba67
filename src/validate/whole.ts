import { describeValue } from '../redact/describe.js';
import { refuse } from './issues.js';

/**
 * A whole number from `min` to `max` (a count, a size, a duration in milliseconds): anything else
 * throws `InvalidInputError` naming `field`, reason `wrong_type` for a value that is not a number and
 * `out_of_range` for any other number, with the refused value described (its type and size), never
 * quoted, since it may be a pasted secret. The one whole-number check of every option and argument.
 *
 * @param min the least value taken (default 1)
 * @param max the greatest value taken (default `Number.MAX_SAFE_INTEGER`, the largest exact whole number)
 * @example
 * validWholeNumber('max', 10)          // 10
 * validWholeNumber('need', 0, 0)       // 0
 * validWholeNumber('max', 0.5)         // throws InvalidInputError, field 'max': 'max must be a whole number >= 1, got 0.5'
 * validWholeNumber('limit', 5000, 1, 1000) // throws: 'limit must be a whole number from 1 to 1000, got 5000'
 */
export function validWholeNumber(field: string, value: unknown, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    const reason = typeof value === 'number' ? 'out_of_range' : 'wrong_type';
    refuse(field, reason, `${field} must be a whole number ${range}, got ${describeValue(value)}`);
  }
  return value;
}
