import { InvalidInputError } from 'keygate';

/** Milliseconds per unit a duration flag accepts. */
const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/**
 * Reads a human duration (`500ms`, `30s`, `15m`, `12h`, `90d`) as milliseconds. A bare number other
 * than `0` is refused, because these flags once took minutes or days and a silent unit would be a guess.
 *
 * @param flag the flag it came from, named in the error (`quiet-for`).
 * @param example a value to show in the error (`15m`).
 * @throws InvalidInputError with `field` `--<flag>`.
 * @example
 * parseDuration('quiet-for', '7d', '15m') // 604_800_000
 */
export function parseDuration(flag: string, text: string, example = '7d'): number {
  const match = DURATION.exec(text.trim());
  // Zero is zero in every unit: `--grace 0` needs none.
  if (text.trim() === '0') return 0;
  if (match) return Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
  const bare = /^\d+(\.\d+)?$/.test(text.trim()) ? '; a bare number is refused' : '';
  throw new InvalidInputError(
    `--${flag}`,
    `--${flag} takes a duration with a unit (ms, s, m, h, d), e.g. --${flag} ${example}${bare}`,
  );
}

/**
 * Writes milliseconds in the largest unit that keeps them whole, as `parseDuration` reads them back.
 *
 * @example
 * formatDuration(900_000) // '15m'
 */
export function formatDuration(ms: number): string {
  const units = Object.entries(UNITS).reverse() as Array<[string, number]>;
  for (const [unit, size] of units) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${Math.round(ms)}ms`;
}
