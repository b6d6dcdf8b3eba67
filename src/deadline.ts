/**
 * Runs `call` under a deadline of `timeoutMs` milliseconds: resolves with its answer; rejects with
 * `timedOut()` when it has not answered in time, and with `failed(err)` when it fails. Never hangs past
 * the deadline, and a call that fails after it is absorbed, never an unhandled rejection. The one
 * mechanism under the shared limiters' and ledgers' deadlines.
 *
 * @example
 * await withDeadline(250, () => client.ping(), { timedOut: () => new Error('late'), failed: (err) => err });
 */
export function withDeadline<T>(
  timeoutMs: number,
  call: () => Promise<T>,
  errors: { timedOut: () => unknown; failed: (err: unknown) => unknown },
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      reject(errors.timedOut());
    }, timeoutMs);
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(call());
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(errors.failed(err));
      },
    );
  });
}
