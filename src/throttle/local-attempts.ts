import type { AttemptWindow } from './types.js';

/** Retry-After for a bucket whose attempts are all in flight: they settle within a lookup's time. */
export const BUSY_WAIT_MS = 1000;

// One client bucket in this process: failures in the open window, and attempts reserved for lookups
// still running. The window opens at the bucket's first failure.
interface Entry {
  failures: number;
  resetAt: number;
  inFlight: number;
}

/**
 * This process's failed-attempt counts per client bucket, bounded (least recently used go first).
 * Every method is synchronous: a reservation is taken before anything else can run.
 */
export class LocalAttempts {
  // In order of last use, least recent first: a read moves an entry to the end.
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly maxClients: number,
  ) {}

  private used(bucket: string): Entry | undefined {
    const e = this.entries.get(bucket);
    if (e !== undefined) {
      this.entries.delete(bucket);
      this.entries.set(bucket, e);
    }
    return e;
  }

  private entry(bucket: string, now: number): Entry {
    let e = this.used(bucket);
    if (e === undefined) {
      if (this.entries.size >= this.maxClients) this.entries.delete(this.entries.keys().next().value as string);
      e = { failures: 0, resetAt: 0, inFlight: 0 };
      this.entries.set(bucket, e);
    } else if (e.failures > 0 && e.resetAt <= now) {
      e.failures = 0;
    }
    return e;
  }

  /** Milliseconds until the bucket's window closes when its failures reached `max`, or 0. */
  waitMs(bucket: string, now: number): number {
    const e = this.used(bucket);
    if (e === undefined || e.failures < this.max || e.resetAt <= now) return 0;
    return e.resetAt - now;
  }

  /** Reserves an attempt: 0, or the milliseconds to wait when failures and reservations fill the budget. */
  reserve(bucket: string, now: number): number {
    const e = this.entry(bucket, now);
    if (e.failures >= this.max) return e.resetAt - now;
    if (e.failures + e.inFlight >= this.max) return BUSY_WAIT_MS;
    e.inFlight++;
    return 0;
  }

  /** Ends a reservation; `failed` counts it as a failure. */
  settle(bucket: string, now: number, failed: boolean): void {
    const e = this.entry(bucket, now);
    if (e.inFlight > 0) e.inFlight--;
    if (failed) this.countFailure(e, now);
  }

  /** Counts a failure that needed no reservation. */
  fail(bucket: string, now: number): void {
    this.countFailure(this.entry(bucket, now), now);
  }

  /** Takes a shared count when it is ahead of this process's: the shared counter sees every instance. */
  adopt(bucket: string, now: number, shared: AttemptWindow): void {
    const e = this.entry(bucket, now);
    if (shared.count >= e.failures) {
      e.failures = shared.count;
      e.resetAt = now + shared.resetMs;
    }
  }

  clear(): void {
    this.entries.clear();
  }

  private countFailure(e: Entry, now: number): void {
    if (e.failures === 0) e.resetAt = now + this.windowMs;
    e.failures++;
  }
}
