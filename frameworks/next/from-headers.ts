import type { PublicKey } from 'keygate';
import { checkOptionNames } from 'keygate/adapter-kit';
import { InvalidInputError } from '#errors';
import { importSecret, SIGNED_KEY_HEADER, verifyKey } from './signed-key.js';

/**
 * Options of {@link apiKeyFromHeaders}.
 *
 * @example
 * const options: ApiKeyFromHeadersOptions = { secret: process.env.KEYGATE_NEXT_SECRET!, maxAgeMs: 30_000 };
 */
export interface ApiKeyFromHeadersOptions {
  /** The middleware's `secret`: a string of at least 32 bytes. */
  secret: string;
  /**
   * How long a signed view stays valid, in milliseconds, either side of the time the middleware
   * signed it (so a header set captured from a log cannot be replayed later). @default 60000
   */
  maxAgeMs?: number;
  /** Current time in unix milliseconds, for tests. @default Date.now */
  clock?: () => number;
}

const OPTION_NAMES = ['secret', 'maxAgeMs', 'clock'];
// Options objects whose members were checked (a route that keeps one object checks it once).
const checked = new WeakSet<object>();

// The last secret's key, imported once: a route reads with the same secret on every request.
let cached: { secret: string; key: Promise<CryptoKey> } | undefined;

/**
 * The key's public view that {@link apiKeyMiddleware} verified for this request, read from the
 * signed header it forwards to the route (`headers` is anything with `get(name)`: `request.headers`, or
 * what `headers()` of `next/headers` returns); `null` when the header is absent (the middleware did not
 * run on this path, or the path was outside its `paths`), forged, altered, or older than `maxAgeMs`.
 * A route that needs a key answers `null` with its own 401. Rejects with `InvalidInputError` naming
 * `secret` for a secret shorter than 32 bytes, `maxAgeMs` for an age that is not a number >= 0, or
 * a member it does not know (reason `unknown_option`: a misspelt `maxAge` is never ignored).
 *
 * @example
 * // app/api/v1/verify/route.ts
 * export async function POST(request: Request) {
 *   const key = await apiKeyFromHeaders(request.headers, { secret: process.env.KEYGATE_NEXT_SECRET! });
 *   if (!key) return Response.json({ error: 'no verified key' }, { status: 401 });
 *   return Response.json({ account: key.accountId });
 * }
 */
export async function apiKeyFromHeaders(
  headers: { get(name: string): string | null },
  options: ApiKeyFromHeadersOptions,
): Promise<PublicKey | null> {
  if (options !== null && typeof options === 'object' && !checked.has(options)) {
    checkOptionNames(options, OPTION_NAMES, 'apiKeyFromHeaders');
    checked.add(options);
  }
  const { secret, maxAgeMs = 60_000, clock = Date.now } = options ?? ({} as ApiKeyFromHeadersOptions);
  if (!(typeof maxAgeMs === 'number' && maxAgeMs >= 0 && Number.isFinite(maxAgeMs))) {
    throw new InvalidInputError('maxAgeMs', 'maxAgeMs must be a number of milliseconds >= 0');
  }
  if (cached?.secret !== secret) cached = { secret, key: importSecret(secret) };
  return verifyKey(await cached.key, headers.get(SIGNED_KEY_HEADER), clock(), maxAgeMs);
}
