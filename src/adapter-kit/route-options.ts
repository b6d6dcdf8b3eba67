import type { AuthenticateOptions } from 'keygate';
import { resolveAuthOptions } from '../auth/authenticate.js';

/**
 * For frameworks whose routes can ask for more permissions than the middleware's own: returns
 * `routeOptions(route, permissions)`, the core options for that route (the middleware's
 * permissions plus the route's), built and validated once per route object and then reused.
 * Bad permissions throw `InvalidInputError` (field `permissions`) when the route is first seen.
 *
 * @example
 * const routeOptions = createRouteOptions(auth);
 * const options = routeOptions(route.config.apiKey, route.config.apiKey.permissions);
 */
export function createRouteOptions(
  auth: AuthenticateOptions,
): (route: object, permissions: readonly string[] | undefined) => AuthenticateOptions {
  const base = resolveAuthOptions(auth).permissions;
  // Keyed by the route's own config object, which frameworks keep by reference for its lifetime.
  const built = new WeakMap<object, AuthenticateOptions>();
  return function routeOptions(route, permissions) {
    let narrowed = built.get(route);
    if (narrowed === undefined) {
      // Anything but an array is handed on as given, for resolveAuthOptions to refuse.
      const extra = Array.isArray(permissions) ? [...new Set([...base, ...permissions])] : (permissions ?? base);
      narrowed = { ...auth, permissions: extra };
      resolveAuthOptions(narrowed);
      built.set(route, narrowed);
    }
    return narrowed;
  };
}
