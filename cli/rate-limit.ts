import { InvalidInputError, type RateLimit } from 'keygate';
import { formatDuration, parseDuration } from './duration.js';

const RATE = /^(\d+)\/(.+)$/;

/**
 * Reads a `--rate-limit` value: `<limit>/<duration>` (`100/1m`, `5000/1h`, `10/500ms`; a bare unit
 * means one of it: `100/m`), or `default` for no limit of the key's own (`null`: the service's default
 * limit applies, when it has one). `none` is read as `default` too, as earlier versions wrote it.
 *
 * @param flag the flag it came from, named in the error (`rate-limit`).
 * @throws InvalidInputError with `field` `--<flag>`.
 * @example
 * parseRateLimit('rate-limit', '100/1m') // { limit: 100, windowMs: 60_000 }
 */
export function parseRateLimit(flag: string, text: string): RateLimit | null {
  const value = text.trim();
  if (value === 'default' || value === 'none') return null;
  const match = RATE.exec(value);
  const limit = Number(match?.[1]);
  if (!match || !Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidInputError(
      `--${flag}`,
      `--${flag} takes requests per duration, a whole number >= 1 and a duration with a unit, e.g. --${flag} 100/1m, or default`,
    );
  }
  const window = match[2] as string;
  return { limit, windowMs: parseDuration(flag, /^\d/.test(window) ? window : `1${window}`, '100/1m') };
}

/**
 * A key's rate limit as `parseRateLimit` reads it back (`100/1m`), or `default` for a key without a
 * limit of its own: it is held to the service's default limit (`rateLimit.default`), if any.
 *
 * @example
 * formatRateLimit({ limit: 100, windowMs: 60_000 }) // '100/1m'
 * formatRateLimit(null)                             // 'default'
 */
export function formatRateLimit(rateLimit: RateLimit | null | undefined): string {
  return rateLimit ? `${rateLimit.limit}/${formatDuration(rateLimit.windowMs)}` : 'default';
}
