/**
 * Runs flushes one at a time, on demand and at an interval: a flush asked for while one runs starts
 * after it, so two never send the same counts at once. The timer never keeps a process alive.
 */
export class SerialFlush {
  private running: Promise<void> = Promise.resolve();
  private readonly timer: ReturnType<typeof setInterval> | undefined;

  /** `intervalMs` 0: no timer, only `run()`. */
  constructor(
    private readonly send: () => Promise<void>,
    intervalMs: number,
  ) {
    if (intervalMs > 0) {
      this.timer = setInterval(() => {
        this.run().catch(() => {});
      }, intervalMs);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /** One more flush, after any running one; rejects when that flush fails. */
  run(): Promise<void> {
    const next = this.running.then(() => this.send());
    this.running = next.catch(() => {});
    return next;
  }

  /** Stops the timer. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
