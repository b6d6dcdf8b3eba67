import { InvalidInputError } from '#errors';
import type { KeygateEvent } from '../events.js';
import { describeValue } from '../redact/describe.js';
import { checkOptionNames } from '../validate/options.js';
import { validWholeNumber } from '../validate/whole.js';
import { type KeyTally, keyEvent } from './counting.js';

const MINUTE = 60_000;
// Weight of the newest minute in the exponentially weighted baseline.
const ALPHA = 0.1;
// Idle minutes folded into the baseline at most (an idle hour already brings it near zero).
const MAX_IDLE_MINUTES = 60;

/** Options of the spike detector. */
export interface SpikeOptions {
  /** A minute is a spike when it has more than `factor` times the key's usual rate. @default 5 */
  factor?: number;
  /** ...and at least this many requests. @default 60 */
  minRequests?: number;
  /** No alarm before the key has this many minutes (not milliseconds) of history in this process. @default 10 */
  warmupMinutes?: number;
}

const DEFAULTS: Required<SpikeOptions> = { factor: 5, minRequests: 60, warmupMinutes: 10 };

/**
 * The spike options with defaults filled in. A member that is `undefined` takes its default like an
 * absent one (`{ factor: undefined }` must not switch detection off); any other value is checked:
 * `factor` a finite number > 0, `minRequests` and `warmupMinutes` whole numbers >= 0. A refused value
 * throws `InvalidInputError` naming `spike.<member>`.
 *
 * @example
 * validSpikeOptions({ factor: undefined, minRequests: 100 }) // { factor: 5, minRequests: 100, warmupMinutes: 10 }
 * validSpikeOptions({ factor: 0 }) // throws InvalidInputError, field 'spike.factor'
 */
export function validSpikeOptions(options: SpikeOptions | null | undefined): Required<SpikeOptions> {
  if (options !== null && options !== undefined && (typeof options !== 'object' || Array.isArray(options))) {
    throw new InvalidInputError('spike', `spike must be an object of options or false, got ${describeValue(options)}`);
  }
  if (options !== null) checkOptionNames(options, ['factor', 'minRequests', 'warmupMinutes'], 'spike', 'spike');
  const {
    factor = DEFAULTS.factor,
    minRequests = DEFAULTS.minRequests,
    warmupMinutes = DEFAULTS.warmupMinutes,
  } = options ?? {};
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor <= 0) {
    throw new InvalidInputError('spike.factor', `spike.factor must be a number > 0, got ${describeValue(factor)}`);
  }
  return {
    factor,
    minRequests: validWholeNumber('spike.minRequests', minRequests, 0),
    warmupMinutes: validWholeNumber('spike.warmupMinutes', warmupMinutes, 0),
  };
}

// One key's requests per minute: the current minute's count and the usual rate before it.
interface MinuteRate {
  minute: number;
  count: number;
  baseline: number;
  minutesSeen: number;
}

/**
 * Watches each key's requests per minute against its own baseline, and reports a minute far above
 * it (a leaked key, a runaway client) as a `usage.spike` event when the next minute starts.
 */
export class SpikeDetector {
  private readonly rates = new Map<string, MinuteRate>();
  private readonly options: Required<SpikeOptions>;

  constructor(
    options: SpikeOptions,
    private readonly onSpike: (event: KeygateEvent) => void,
  ) {
    this.options = validSpikeOptions(options);
  }

  /** Counts one request of the tally's key at `now`. */
  observe(t: KeyTally, now: number): void {
    const minute = Math.floor(now / MINUTE);
    let rate = this.rates.get(t.keyId);
    if (rate === undefined) {
      rate = { minute, count: 0, baseline: 0, minutesSeen: 0 };
      this.rates.set(t.keyId, rate);
    } else if (rate.minute !== minute) {
      this.closeMinutes(t, rate, minute, now);
    }
    rate.count++;
  }

  private closeMinutes(t: KeyTally, rate: MinuteRate, minute: number, now: number): void {
    const n = rate.count;
    const o = this.options;
    // The minute that just ended is a spike if it is far above this key's own baseline.
    const adjacent = minute - rate.minute === 1;
    if (
      adjacent &&
      rate.minutesSeen >= o.warmupMinutes &&
      n >= o.minRequests &&
      n > o.factor * Math.max(rate.baseline, 1)
    ) {
      const baselinePerMinute = Math.round(rate.baseline * 10) / 10;
      this.onSpike(keyEvent('usage.spike', t, now, { lastMinute: n, baselinePerMinute }));
    }
    // Idle minutes count as zero.
    rate.baseline = rate.minutesSeen === 0 ? n : rate.baseline * (1 - ALPHA) + n * ALPHA;
    const idle = Math.max(Math.min(minute - rate.minute - 1, MAX_IDLE_MINUTES), 0);
    rate.baseline *= (1 - ALPHA) ** idle;
    rate.minutesSeen += 1 + idle;
    rate.minute = minute;
    rate.count = 0;
  }
}
