import { InvalidInputError } from '#errors';
import { describeValue } from '../redact/describe.js';

// The one rule for credit amounts, shared by every ledger so that each refuses the same values the
// same way: a safe integer (credits, or a currency's minor unit), never a fraction, NaN, an infinity,
// 2**53 or more, or a numeric string.

/**
 * Checks a credit amount: a safe integer >= `minimum` (`1` for `topUp` and `hold`, `0` for `settle`).
 * Anything else throws `InvalidInputError` naming `field` (default `amount`), reason `wrong_type`
 * for a value that is not a number and `out_of_range` for any other number; the value is described,
 * never quoted. For authors of ledgers over other backends: check before writing anything.
 *
 * @example
 * checkCreditAmount(5, 1)        // 5
 * checkCreditAmount(0, 1)        // throws InvalidInputError, field 'amount', reason 'out_of_range'
 * checkCreditAmount('5', 0)      // throws InvalidInputError, field 'amount', reason 'wrong_type'
 */
export function checkCreditAmount(value: unknown, minimum: 0 | 1, field = 'amount'): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= minimum) return value;
  throw new InvalidInputError(
    field,
    `${field} must be a whole number of credits >= ${minimum} and below 2**53, got ${describeValue(value)}`,
    { reason: typeof value === 'number' ? 'out_of_range' : 'wrong_type' },
  );
}

/**
 * The error of a `settle` asking for more than the hold holds: `InvalidInputError` naming `amount`,
 * reason `out_of_range`. Throw it before changing anything.
 *
 * @example
 * if (amount > hold.amount) throw amountOverHold(amount, hold.amount);
 */
export function amountOverHold(amount: number, held: number): InvalidInputError {
  return new InvalidInputError('amount', `amount ${amount} is more than the hold's ${held} credits`, {
    reason: 'out_of_range',
  });
}

/**
 * The error of a `topUp` that would take an account's credits (available plus held) past
 * `Number.MAX_SAFE_INTEGER`, where a balance could no longer be told exactly: `InvalidInputError`
 * naming `amount`, reason `out_of_range`. Throw it before writing anything.
 *
 * @example
 * if (amount > Number.MAX_SAFE_INTEGER - (available + held)) throw amountOverflow(amount);
 */
export function amountOverflow(amount: number): InvalidInputError {
  return new InvalidInputError('amount', `a top-up of ${amount} would take the account past 2**53 - 1 credits`, {
    reason: 'out_of_range',
  });
}
