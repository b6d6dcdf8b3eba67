import { CreditLedgerUnavailableError, KeygateError } from '#errors';
import { withDeadline } from '../deadline.js';

/**
 * Runs one backend call of a shared credit ledger under a deadline of `timeoutMs` milliseconds
 * (ledgers default to `DEFAULT_LEDGER_TIMEOUT_MS`, 1,000). Resolves with its answer; rejects with
 * `CreditLedgerUnavailableError` when the call fails (its error is `cause`) or has not answered in
 * time. A `KeygateError` the call throws on purpose (an `InvalidInputError` for a settle over the
 * hold) passes through unchanged. Never hangs past the deadline, and a call that fails after it is
 * absorbed, never an unhandled rejection. For authors of ledgers over other backends.
 *
 * @example
 * const reply = await withLedgerDeadline('RedisCreditLedger', this.timeoutMs, () => client.eval(script, keys, args));
 */
export function withLedgerDeadline<T>(name: string, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  return withDeadline(timeoutMs, call, {
    timedOut: () =>
      new CreditLedgerUnavailableError(
        `${name} did not answer within ${timeoutMs} ms`,
        new Error(`timed out after ${timeoutMs} ms`),
      ),
    failed: (err) =>
      err instanceof KeygateError
        ? err
        : new CreditLedgerUnavailableError(`${name} failed; its client's error is the cause`, err),
  });
}
