import { InvalidInputError, type KeyRateLimit, type NamedRateLimit, type RateLimit } from 'keygate';
import { formatDuration, parseDuration } from './duration.js';

const RATE = /^(\d+)\/(.+)$/;
const NAMED = /^([^=\s]+)\s*=\s*(.+)$/;

/**
 * Reads a `--rate-limit` value: `<limit>/<duration>` (`100/1m`, `5000/1h`, `10/500ms`; a bare unit
 * means one of it: `100/m`); several named limits, comma-separated, each `<name>=<limit>/<duration>`
 * (`burst=100/1s,monthly=1000000/30d`); or `default` for no limit of the key's own (`null`: the
 * service's default limit applies, when it has one). `none` is read as `default` too, as earlier
 * versions wrote it. Names are checked where keys are written (`KeyManager`).
 *
 * @param flag the flag it came from, named in the error (`rate-limit`).
 * @throws InvalidInputError with `field` `--<flag>`.
 * @example
 * parseRateLimit('rate-limit', '100/1m') // { limit: 100, windowMs: 60_000 }
 * parseRateLimit('rate-limit', 'burst=10/1s,daily=1000/1d') // [{ name: 'burst', ... }, { name: 'daily', ... }]
 */
export function parseRateLimit(flag: string, text: string): KeyRateLimit | null {
  const value = text.trim();
  if (value === 'default' || value === 'none') return null;
  if (!value.includes('=')) return parseOne(flag, value);
  return value.split(',').map((part): NamedRateLimit => {
    const match = NAMED.exec(part.trim());
    if (!match) {
      throw new InvalidInputError(
        `--${flag}`,
        `--${flag} takes named limits as name=limit/duration, comma-separated, e.g. --${flag} burst=100/1s,monthly=1000000/30d`,
      );
    }
    return { name: match[1] as string, ...parseOne(flag, (match[2] as string).trim()) };
  });
}

function parseOne(flag: string, value: string): RateLimit {
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
 * formatRateLimit([{ name: 'burst', limit: 10, windowMs: 1000 }]) // 'burst=10/1s'
 */
export function formatRateLimit(rateLimit: KeyRateLimit | null | undefined): string {
  if (!rateLimit) return 'default';
  const one = (l: RateLimit) => `${l.limit}/${formatDuration(l.windowMs)}`;
  if (!Array.isArray(rateLimit)) return one(rateLimit as RateLimit);
  return (rateLimit as readonly NamedRateLimit[]).map((l) => `${l.name}=${one(l)}`).join(',');
}
