import { InvalidInputError } from '#errors';

/**
 * Where {@link apiKeyMiddleware} requires a key: a path prefix that starts with `/` and matches on
 * segment boundaries (`'/api/v1'` matches `/api/v1` and `/api/v1/verify`, not `/api/v10`), or a
 * `RegExp` tested against the pathname (without Next's `basePath`).
 *
 * @example
 * const paths: PathPattern[] = ['/api/v1', /^\/api\/admin(\/|$)/];
 */
export type PathPattern = string | RegExp;

/** A test of a pathname against the `paths` option; everything when there is none. */
export function compilePaths(paths: unknown): (pathname: string) => boolean {
  if (paths === undefined) return () => true;
  if (!Array.isArray(paths) || paths.length === 0) {
    throw new InvalidInputError(
      'paths',
      'paths must be a non-empty array of path prefixes or RegExps (or left out: every path)',
    );
  }
  const prefixes: string[] = [];
  const patterns: RegExp[] = [];
  for (const path of paths as unknown[]) {
    if (path instanceof RegExp) patterns.push(new RegExp(path.source, path.flags.replace(/[gy]/g, '')));
    else if (typeof path === 'string' && path.startsWith('/')) prefixes.push(path.replace(/(.)\/+$/, '$1'));
    else
      throw new InvalidInputError(
        'paths',
        `paths entries must be RegExps or strings starting with "/", got ${JSON.stringify(String(path))}`,
      );
  }
  return function inScope(pathname) {
    for (const prefix of prefixes) {
      if (prefix === '/' || pathname === prefix || pathname.startsWith(`${prefix}/`)) return true;
    }
    return patterns.some((pattern) => pattern.test(pathname));
  };
}
