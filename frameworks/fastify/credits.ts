import type { FastifyRequest } from 'fastify';
import { type AuthenticateOptions, InvalidInputError } from 'keygate';
import { type AdapterRequest, resolveAuthOptions } from 'keygate/adapter-kit';
import type { RouteApiKeyConfig } from './types.js';

type RouteCost = number | ((request: AdapterRequest<FastifyRequest>) => number);

/**
 * The options a route's credits are held with: the plugin's, or with the route's own
 * `config.apiKey.cost`, built and validated once per route config object. A `cost` on a plugin
 * without `credits` is refused (`InvalidInputError`, field `config.apiKey.cost`).
 */
export function billedRoutes(
  auth: AuthenticateOptions,
): (config: RouteApiKeyConfig | undefined, url: string) => AuthenticateOptions {
  const built = new WeakMap<object, AuthenticateOptions>();
  return function billed(config, url) {
    const cost = config ? (config as { cost?: RouteCost }).cost : undefined;
    if (!config || cost === undefined) return auth;
    let options = built.get(config);
    if (options === undefined) {
      if (!auth.credits) {
        throw new InvalidInputError(
          'config.apiKey.cost',
          `config.apiKey.cost of ${url} needs the plugin's credits option`,
        );
      }
      options = { ...auth, credits: { ...auth.credits, cost: cost as never } };
      resolveAuthOptions(options);
      built.set(config, options);
    }
    return options;
  };
}
