import { InvalidInputError } from '#errors';
import { flag } from '../validate/flag.js';
import { validWholeNumber } from '../validate/whole.js';
import { capabilityOf } from '../vocabulary/capabilities.js';

/**
 * The options every leased wrapper takes, as its caller wrote them (each optional).
 *
 * @example
 * const options: LeaseOptions = { maxSlice: 300, divisor: 8, timeoutMs: 1_000, prefetch: true };
 */
export interface LeaseOptions {
  maxSlice?: number;
  divisor?: number;
  timeoutMs?: number;
  prefetch?: boolean;
  clock?: () => number;
}

/**
 * A leased wrapper's options once checked, with its defaults filled in.
 *
 * @example
 * const settings: LeaseSettings = { maxSlice: 300, divisor: 8, timeoutMs: 1_000, prefetch: true, clock: Date.now };
 */
export interface LeaseSettings {
  /** The most a process holds free for one slice's owner, its slice and the next together, in units or credits. */
  readonly maxSlice: number;
  /** A slice is at most this fraction (1/divisor) of what the shared part has left. */
  readonly divisor: number;
  /** The longest a request waits for the shared part, in milliseconds. */
  readonly timeoutMs: number;
  /** Whether slices are topped up in the background before they run dry. */
  readonly prefetch: boolean;
  /** Current time in epoch milliseconds. */
  readonly clock: () => number;
}

/**
 * What differs between the wrappers' defaults: `maxSlice`, and `timeoutMs` (twice the shared part's
 * own deadline, at least `timeoutFloorMs`; `timeoutFallbackMs` when it declares none).
 *
 * @example
 * const defaults: LeaseDefaults = { maxSlice: 300, timeoutFloorMs: 500, timeoutFallbackMs: 1_000 };
 */
export interface LeaseDefaults {
  readonly maxSlice: number;
  readonly timeoutFloorMs: number;
  readonly timeoutFallbackMs: number;
}

/**
 * Checks the options a leased wrapper shares with the other (`clock`, `maxSlice`, `divisor`,
 * `prefetch`, `timeoutMs`, in that order) and fills in their defaults; `shared` is the part slices
 * are taken from, whose `deadline` sets the default `timeoutMs`. Throws `InvalidInputError` naming
 * the first bad option.
 *
 * @example
 * const settings = leaseSettings(options, options.limiter, { maxSlice: 300, timeoutFloorMs: 500, timeoutFallbackMs: 1_000 });
 */
export function leaseSettings(options: LeaseOptions, shared: unknown, defaults: LeaseDefaults): LeaseSettings {
  if (options.clock !== undefined && typeof options.clock !== 'function') {
    throw new InvalidInputError('clock', 'clock must be a function returning epoch milliseconds');
  }
  const maxSlice = validWholeNumber('maxSlice', options.maxSlice ?? defaults.maxSlice);
  const divisor = validWholeNumber('divisor', options.divisor ?? 8);
  const prefetch = flag('prefetch', options.prefetch);
  const own = capabilityOf(shared, 'deadline')?.timeoutMs;
  const ownDefault =
    typeof own === 'number' && own > 0 ? Math.max(2 * own, defaults.timeoutFloorMs) : defaults.timeoutFallbackMs;
  const timeoutMs = validWholeNumber('timeoutMs', options.timeoutMs ?? ownDefault);
  return { maxSlice, divisor, timeoutMs, prefetch, clock: options.clock ?? Date.now };
}
