import { InvalidInputError, type RateLimit } from 'keygate';
import { formatDuration, parseDuration } from './duration.js';

const RATE = /^(\d+)\/(.+)$/;

/**
 * Reads a `--rate-limit` value: `<limit>/<duration>` (`100/1m`, `5000/1h`, `10/500ms`; a bare unit
 * means one of it: `100/m`), or `none` for no limit of the key's own (`null`).
 *
 * @param flag the flag it came from, named in the error (`rate-limit`).
 * @throws InvalidInputError with `field` `--<flag>`.
 * @example
 * parseRateLimit('rate-limit', '100/1m') // { limit: 100, windowMs: 60_000 }
 */
export function parseRateLimit(flag: string, text: string): RateLimit | null {
  const value = text.trim();
  if (value === 'none') return null;
  const match = RATE.exec(value);
  const limit = Number(match?.[1]);
  if (!match || !Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidInputError(
      `--${flag}`,
      `--${flag} takes requests per duration, a whole number >= 1 and a duration with a unit, e.g. --${flag} 100/1m, or none`,
    );
  }
  const window = match[2] as string;
  return { limit, windowMs: parseDuration(flag, /^\d/.test(window) ? window : `1${window}`, '100/1m') };
}

/**
 * A key's rate limit as `parseRateLimit` reads it back (`100/1m`), or `none`.
 *
 * @example
 * formatRateLimit({ limit: 100, windowMs: 60_000 }) // '100/1m'
 */
export function formatRateLimit(rateLimit: RateLimit | null | undefined): string {
  return rateLimit ? `${rateLimit.limit}/${formatDuration(rateLimit.windowMs)}` : 'none';
}
