// The same three routes built with each Fetch-style adapter. Runtime-neutral (no `node:` imports):
// the Node tests import it directly and the workerd tests bundle it into a worker.
import { Hono } from 'hono';
import {
  type KeyStore,
  MemoryCreditLedger,
  MemoryRateLimiter,
  type RateLimiter,
  RateLimiterUnavailableError,
} from 'keygate';
import { withApiKeyAuth } from 'keygate/fetch';
import { type ApiKeyEnv, apiKeyAuth } from 'keygate/hono';
import { failingStore, hangingStore } from '../support/fixtures.js';

/** The default limit of the rate-limited routes, for keys without their own: 100 units per minute. */
export const DEFAULT_LIMIT = { limit: 100, windowMs: 60_000 } as const;

/** A shared limiter that is down: every call rejects. */
const downLimiter: RateLimiter = {
  consume: () => Promise.reject(new RateLimiterUnavailableError('down', new Error('ECONNREFUSED'))),
};

/**
 * Route path -> adapter options, identical in every adapter under test. The rate-limited routes use a
 * limiter whose clock stands still, with costs that keep every answer the same however often a route
 * is called: `/v1/limited` costs 0 (a 200 that reads the state), `/v1/batch` costs one unit more
 * than the `limited` key's whole limit (always a 429, with nothing counted). `/v1/broke` bills from a
 * ledger where no account has any credits: a live key always gets 402, a test key is always free.
 */
export function routeOptions(store: KeyStore) {
  const limiter = new MemoryRateLimiter({ clock: () => 1_700_000_000_000 });
  const verify = { store, permissions: ['email:verify'], retryAfterMs: 7000 } as const;
  return {
    '/v1/check': verify,
    '/v1/down': { store: failingStore, retryAfterMs: 7000 },
    '/v1/slow': { store: hangingStore, timeoutMs: 50, retryAfterMs: 7000 },
    '/v1/limited': { ...verify, rateLimit: { limiter, cost: 0, default: DEFAULT_LIMIT } },
    '/v1/batch': { ...verify, rateLimit: { limiter, cost: 11 } },
    '/v1/limiter-down': { ...verify, rateLimit: { limiter: downLimiter, onLimiterError: 'deny' as const } },
    '/v1/broke': { ...verify, credits: { ledger: new MemoryCreditLedger() } },
    '/v1/bearer': { ...verify, from: 'bearer' as const },
    '/v1/either': { ...verify, from: 'either' as const },
  } as const;
}

/** Stands in for a proxy that overwrites `X-Forwarded-For`: the only safe way to trust a header. */
const fromTrustedProxy = (request: Request) => request.headers.get('x-forwarded-for') ?? undefined;

/** One `withApiKeyAuth` handler per route, mounted under `base`. */
export function createFetchHandler(store: KeyStore, base = ''): (request: Request) => Promise<Response> {
  const handlers = new Map(
    Object.entries(routeOptions(store)).map(([path, options]) => [
      base + path,
      withApiKeyAuth((_request, key) => Response.json({ keyId: key.id }), { ...options, clientIp: fromTrustedProxy }),
    ]),
  );
  return async (request) => {
    const handler = handlers.get(new URL(request.url).pathname);
    return handler ? handler(request) : new Response('not found', { status: 404 });
  };
}

/** A Hono app with the same routes, mounted under `base`. */
export function createHonoApp(store: KeyStore, base = ''): Hono<ApiKeyEnv> {
  const app = new Hono<ApiKeyEnv>().basePath(base);
  for (const [path, options] of Object.entries(routeOptions(store))) {
    app.get(path, apiKeyAuth({ ...options, clientIp: (c) => fromTrustedProxy(c.req.raw) }), (c) =>
      c.json({ keyId: c.get('apiKey').id }),
    );
  }
  return app;
}
