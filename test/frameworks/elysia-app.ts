// The shared routes on Elysia: runtime-neutral, so the Node tests call it through `app.handle()` and
// test/frameworks/elysia/server.ts serves it on Bun over a real socket.
import { Elysia } from 'elysia';
import type { KeyStore } from 'keygate';
import { apiKeyAuth } from 'keygate/elysia';
import { routeOptions } from './apps.js';

/** Stands in for a proxy that overwrites `X-Forwarded-For`, as the Fetch and Hono apps do. */
const fromTrustedProxy = ({ request }: { request: Request }) => request.headers.get('x-forwarded-for') ?? undefined;

/** One Elysia instance per route, each with the plugin under that route's options. */
export function createElysiaApp(store: KeyStore): Elysia {
  const app = new Elysia();
  for (const [path, options] of Object.entries(routeOptions(store))) {
    app.use(
      new Elysia()
        .use(apiKeyAuth({ ...options, clientIp: fromTrustedProxy }))
        .get(path, ({ apiKey }) => ({ keyId: apiKey.id })),
    );
  }
  return app as unknown as Elysia;
}
