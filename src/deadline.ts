// `call()` as a promise: a synchronous throw becomes its rejection.
function attempt<T>(call: () => Promise<T>): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * Runs `call` under a deadline of `timeoutMs` milliseconds: resolves with its answer; rejects with
 * `timedOut()` when it has not answered in time, and with `failed(err)` when it fails. Never hangs past
 * the deadline, and a call that fails after it is absorbed, never an unhandled rejection. An answer
 * that comes after the deadline goes to `late` (if given), so that what the call did can be undone:
 * its caller has been told it failed. The one mechanism under the shared limiters' and ledgers'
 * deadlines.
 *
 * @example
 * await withDeadline(250, () => client.ping(), { timedOut: () => new Error('late'), failed: (err) => err });
 */
export function withDeadline<T>(
  timeoutMs: number,
  call: () => Promise<T>,
  errors: { timedOut: () => unknown; failed: (err: unknown) => unknown },
  late?: (value: T) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      reject(errors.timedOut());
    }, timeoutMs);
    const pending = attempt(call);
    pending.then(
      (value) => {
        if (settled) {
          // The deadline passed first. A `late` that throws must not become an unhandled rejection.
          try {
            late?.(value);
          } catch {}
          return;
        }
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

/**
 * Waits at most `timeoutMs` milliseconds for a call made in the background (a leased slice's top-up):
 * `landed` gets its answer when it comes in time, `late` when it comes after (to give back what it
 * took); a failure is ignored either way. The returned promise never rejects: it settles once the
 * answer has landed (after `landed`) or the time is up, whichever comes first.
 *
 * @example
 * slice.taking = inBackground(500, () => leases.take(id, limit, ask), (lease) => add(lease), (lease) => giveBack(lease));
 */
export function inBackground<T>(
  timeoutMs: number,
  call: () => Promise<T>,
  landed: (value: T) => void,
  late: (value: T) => void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let over = false;
    const timer = setTimeout(() => {
      over = true;
      resolve();
    }, timeoutMs);
    (timer as { unref?: () => void }).unref?.();
    const finish = (value?: T, answered = false) => {
      if (over) return void (answered && late(value as T));
      over = true;
      clearTimeout(timer);
      try {
        if (answered) landed(value as T);
      } finally {
        resolve();
      }
    };
    const pending = attempt(call);
    pending.then(
      (value) => finish(value, true),
      () => finish(),
    );
  });
}

/**
 * Waits for `pending` at most `timeoutMs` milliseconds, on a timer armed now (not by whoever started
 * it); never rejects.
 *
 * @example
 * await settledWithin(Promise.all(refills), 2_000);
 */
export function settledWithin(pending: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  const done = pending.then(
    () => {},
    () => {},
  );
  return Promise.race([done, expired]).then(() => clearTimeout(timer));
}
