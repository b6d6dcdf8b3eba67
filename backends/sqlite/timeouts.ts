import { InvalidInputError } from 'keygate';
import { quote } from 'keygate/store-kit';

/**
 * The `busyTimeoutMs` option: `defaultMs` when absent, else a whole number of milliseconds from 0 to
 * one hour (SQLite's `busy_timeout` takes whole milliseconds). Anything else throws
 * `InvalidInputError` naming `busyTimeoutMs`.
 *
 * @example
 * validBusyTimeoutMs(undefined, 2_000) // 2000
 */
export function validBusyTimeoutMs(value: unknown, defaultMs: number): number {
  const ms = value ?? defaultMs;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > 3_600_000) {
    throw new InvalidInputError(
      'busyTimeoutMs',
      `busyTimeoutMs must be a whole number from 0 to 3600000, got ${quote(ms)}`,
    );
  }
  return ms;
}
