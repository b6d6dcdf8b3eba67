import { InvalidInputError } from '#errors';
import { checkOptionNames } from '../src/validate/options.js';

const START_OPTION_NAMES = ['intervalMs', 'onError'] as const;

/**
 * The `start` / `stop` pair of a job that runs `runOnce` over and over: the next run starts
 * `intervalMs` after the last one ended (never two at once), on an unref'd timer that keeps no
 * process alive; `stop` waits for a run in progress. A failed run goes to `onError` and the next
 * one is still scheduled.
 *
 * @example
 * const { start, stop } = repeating(runOnce, 5_000);
 * start({ onError: console.error });
 */
export function repeating(
  runOnce: () => Promise<unknown>,
  defaultIntervalMs: number,
): {
  start(options?: { intervalMs?: number; onError?: (err: unknown) => void }): void;
  stop(): Promise<void>;
} {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  return {
    start(options = {}) {
      checkOptionNames(options, START_OPTION_NAMES, 'start');
      const { intervalMs = defaultIntervalMs, onError } = options;
      if (typeof intervalMs !== 'number' || !(intervalMs > 0) || !Number.isFinite(intervalMs)) {
        throw new InvalidInputError('intervalMs', 'intervalMs must be a number of milliseconds > 0');
      }
      if (!stopped) return;
      stopped = false;
      const tick = () => {
        running = runOnce()
          .catch((err: unknown) => onError?.(err))
          .finally(() => {
            if (stopped) return;
            timer = setTimeout(tick, intervalMs);
            (timer as { unref?: () => void }).unref?.();
          });
      };
      tick();
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
