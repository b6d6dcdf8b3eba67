import { InvalidInputError } from 'keygate';
import { quote } from 'keygate/store-kit';

const BASE_PATH = /^(\/[A-Za-z0-9._~-]+)+$/;

/**
 * The mount path in one spelling: `'/'`, or segments without a trailing slash (`'/dashboard'`).
 * Refused with `InvalidInputError` (field `basePath`) when it is not a plain absolute path.
 */
export function normalizeBasePath(value: unknown): string {
  if (value === undefined || value === '/' || value === '') return '/';
  const trimmed = typeof value === 'string' ? value.replace(/\/+$/, '') : value;
  if (typeof trimmed !== 'string' || !BASE_PATH.test(trimmed)) {
    throw new InvalidInputError(
      'basePath',
      `basePath must be an absolute path such as '/dashboard', got ${quote(value)}`,
    );
  }
  return trimmed;
}

/** A path of the dashboard under its mount path: `under('/dashboard', '/keys')` is `'/dashboard/keys'`. */
export function under(basePath: string, path: string): string {
  return basePath === '/' ? path : `${basePath}${path}`;
}

/**
 * The request's path inside the dashboard: the mount path taken off when the request still carries
 * it (`ui.fetch` behind a router that passes full URLs), kept when the host already removed it
 * (Hono's `app.mount`, Express's `app.use(path, ...)` seen through `req.url`).
 */
export function innerPath(basePath: string, pathname: string): string {
  if (basePath === '/') return pathname;
  if (pathname === basePath) return '/';
  if (pathname.startsWith(`${basePath}/`)) return pathname.slice(basePath.length);
  return pathname;
}
