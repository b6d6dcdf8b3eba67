import { expect, vi } from 'vitest';

/** Lets every timer callback, promise reaction and I/O callback that is due run (setImmediate is never faked here). */
const flush = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Starts `call` under fake `setTimeout`/`clearTimeout` and checks WHEN it settles: still pending
 * `ms - 1` ms later, settled by `ms + 1` ms. A deadline that is longer or shorter than `ms` fails,
 * yet no wall-clock time is measured. Returns how it settled; real timers are back afterwards.
 * Only for calls that need no real timer of their own (stubbed clients, no sockets).
 *
 * @example
 * const outcome = await settlesAt(50, () => limiter.consume('key_1', { limit: 1, windowMs: 1000 }, 1));
 * expect(outcome.status).toBe('rejected');
 */
export async function settlesAt<T>(ms: number, call: () => Promise<T>): Promise<PromiseSettledResult<T>> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    let settled = false;
    const outcome = Promise.allSettled([call()]).then(([result]) => {
      settled = true;
      return result as PromiseSettledResult<T>;
    });
    await flush();
    await vi.advanceTimersByTimeAsync(ms - 1);
    await flush();
    expect(settled, `settled before its ${ms} ms deadline`).toBe(false);
    await vi.advanceTimersByTimeAsync(2);
    await flush();
    expect(settled, `still pending after its ${ms} ms deadline`).toBe(true);
    return await outcome;
  } finally {
    vi.useRealTimers();
  }
}

/**
 * The reason `settlesAt` settled with, as a record; throws when the call resolved instead.
 *
 * @example
 * const err = rejectedWith(await settlesAt(50, () => limiter.consume('key_1', policy, 1)));
 * expect(err).toMatchObject({ code: 'rate_limiter_unavailable' });
 */
export function rejectedWith(outcome: PromiseSettledResult<unknown>): Record<string, unknown> {
  if (outcome.status !== 'rejected') throw new Error('expected a rejection');
  return outcome.reason as Record<string, unknown>;
}
