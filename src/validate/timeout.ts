import { InvalidInputError } from '#errors';
import { quote } from '../redact/describe.js';

/** The longest timer `setTimeout` keeps (about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The `timeoutMs` option of a shared limiter or ledger: `defaultMs` when absent, else a number of
 * milliseconds above 0 and no longer than a timer can wait. Anything else throws `InvalidInputError`
 * naming `timeoutMs` (reason `out_of_range`). For authors of backends over other databases.
 *
 * @example
 * validTimeoutMs(undefined, 250) // 250
 * validTimeoutMs(0, 250)         // throws InvalidInputError, field 'timeoutMs'
 */
export function validTimeoutMs(value: unknown, defaultMs: number): number {
  const timeoutMs = value ?? defaultMs;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
    throw new InvalidInputError(
      'timeoutMs',
      `timeoutMs must be a number of milliseconds > 0, got ${quote(timeoutMs)}`,
      {
        reason: 'out_of_range',
      },
    );
  }
  return timeoutMs;
}
