import { inBackground, settledWithin } from '../deadline.js';
import type { LeaseSlice } from './slice-store.js';

/**
 * The background top-ups of one leased wrapper: each runs under the wrapper's `timeoutMs` (an
 * answer after it goes to `late`, to be given back), marks its slice's `refilling` while in flight,
 * and is tracked, so that `idle()` and a `close()` can wait for every one in flight.
 *
 * @example
 * const refills = new RefillScheduler(500);
 * refills.start(slice, () => leases.take(keyId, limit, ask), (lease) => add(slice, lease), (lease) => giveBack(lease));
 * await refills.idle();
 */
export class RefillScheduler {
  private readonly inFlight = new Set<Promise<void>>();

  /** @param timeoutMs the longest a top-up's answer is waited for, in milliseconds */
  constructor(private readonly timeoutMs: number) {}

  /** How many top-ups are in flight. */
  get size(): number {
    return this.inFlight.size;
  }

  /**
   * Takes the slice's next units or credits in the background: `landed` gets the answer when it
   * comes within `timeoutMs`, `late` when it comes after; a failure is left to the request that runs
   * out. Once it settled, `slice.refilling` is cleared and `then` runs (its promise, if any, counts
   * as part of the top-up). Answers the top-up's promise, which never rejects.
   */
  start<T>(
    slice: LeaseSlice,
    call: () => Promise<T>,
    landed: (value: T) => void,
    late: (value: T) => void,
    then?: () => Promise<void> | undefined,
  ): Promise<void> {
    const refilling: Promise<void> = inBackground(this.timeoutMs, call, landed, late).then(() => {
      slice.refilling = undefined;
      const more = then?.();
      const done = () => void this.inFlight.delete(refilling);
      if (more === undefined) return done();
      return more.then(done, done);
    });
    slice.refilling = refilling;
    this.inFlight.add(refilling);
    return refilling;
  }

  /** Resolves once no top-up is in flight (at once when none is; each settles within `timeoutMs`). Never rejects. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** Waits for the top-ups in flight now, at most `timeoutMs` on a timer armed now. Never rejects. */
  drain(): Promise<void> {
    return settledWithin(Promise.all(this.inFlight), this.timeoutMs);
  }
}
