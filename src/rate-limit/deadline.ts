import { RateLimiterUnavailableError } from '#errors';
import { withDeadline } from '../deadline.js';

/**
 * Runs one backend call of a shared limiter under a deadline of `timeoutMs` milliseconds. Resolves with
 * its answer; rejects with `RateLimiterUnavailableError` when the call fails (its error is `cause`)
 * or has not answered in time. Never hangs past the deadline, and a call that fails after it is
 * absorbed, never an unhandled rejection. An answer that comes after the deadline (a stalled
 * connection delivers, a client sends its offline queue on reconnecting) goes to `late`, if given:
 * the caller was told the call failed, so what it counted can be given back. For authors of limiters
 * over other backends.
 *
 * @example
 * const reply = await withLimiterDeadline('MyRateLimiter', 250, () => client.eval(script, [key], [cost]));
 */
export function withLimiterDeadline<T>(
  name: string,
  timeoutMs: number,
  call: () => Promise<T>,
  late?: (value: T) => void,
): Promise<T> {
  return withDeadline(
    timeoutMs,
    call,
    {
      timedOut: () =>
        new RateLimiterUnavailableError(
          `${name} did not answer within ${timeoutMs} ms`,
          new Error(`timed out after ${timeoutMs} ms`),
        ),
      failed: (err) =>
        err instanceof RateLimiterUnavailableError
          ? err
          : new RateLimiterUnavailableError(`${name} failed; its client's error is the cause`, err),
    },
    late,
  );
}
