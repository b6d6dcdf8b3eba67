// A background task run every `intervalMs`, never two runs at once; its failures are counted and the
// latest kept, for the report (a soak's background work must not fail quietly).

export interface Repeat {
  failures: number;
  lastError?: string;
  /** Runs it now (after the run under way, if any) and waits for it. */
  now(): Promise<void>;
  /** Stops the timer and waits for the run under way. */
  stop(): Promise<void>;
}

/**
 * Starts `task` every `intervalMs` milliseconds.
 *
 * @example
 * const topUps = repeat(5_000, () => funding.round()); ...; await topUps.stop();
 */
export function repeat(intervalMs: number, task: () => Promise<void>): Repeat {
  let running: Promise<void> = Promise.resolve();
  let queued = 0;
  const self: Repeat = {
    failures: 0,
    now() {
      queued++;
      running = running.then(async () => {
        try {
          await task();
        } catch (err) {
          self.failures++;
          self.lastError = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        } finally {
          queued--;
        }
      });
      return running;
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
  // A tick while a run is under way or waiting is skipped: a slow task is not queued up.
  const timer = setInterval(() => {
    if (queued === 0) void self.now();
  }, intervalMs);
  return self;
}
