// The same three routes built with each Fetch-style adapter. Runtime-neutral (no `node:` imports):
// the Node tests import it directly and the workerd tests bundle it into a worker.
import { Hono } from 'hono';
import type { KeyStore } from 'keygate';
import { withApiKeyAuth } from 'keygate/fetch';
import { type ApiKeyEnv, apiKeyAuth } from 'keygate/hono';
import { failingStore, hangingStore } from '../support/fixtures.js';

/** Route path -> adapter options, identical in every adapter under test. */
export function routeOptions(store: KeyStore) {
  return {
    '/v1/check': { store, permissions: ['email:verify'], retryAfterMs: 7000 },
    '/v1/down': { store: failingStore, retryAfterMs: 7000 },
    '/v1/slow': { store: hangingStore, timeout: 50, retryAfterMs: 7000 },
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
