// Node-side builders of the shared routes for Express and Fastify, and a listener on 127.0.0.1:0.
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import type { KeyStore } from 'keygate';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { routeOptions } from './apps.js';
import { HEADERS, type Observed, type SendCase } from './cases.js';

/** The shared routes on Express; `trust` is Express's `trust proxy` setting. */
export function createExpressApp(store: KeyStore, trust: string | boolean = 'loopback'): express.Express {
  const app = express();
  app.set('trust proxy', trust);
  for (const [path, options] of Object.entries(routeOptions(store))) {
    app.get(path, expressAuth(options), (req, res) => {
      res.json({ keyId: req.apiKey?.id });
    });
  }
  return app;
}

/**
 * The shared routes on Fastify (5, or 4 through `make`): one encapsulated context per store, and the
 * check route narrows the permissions through its route config.
 */
export async function createFastifyApp(
  store: KeyStore,
  trustProxy: string | boolean = '127.0.0.1',
  make: (options: { trustProxy: string | boolean }) => FastifyInstance = Fastify,
): Promise<FastifyInstance> {
  const app = make({ trustProxy });
  for (const [path, { permissions, ...options }] of Object.entries(routeOptions(store)) as Array<
    [string, { permissions?: readonly string[] } & ReturnType<typeof routeOptions>['/v1/down']]
  >) {
    await app.register(async (scope) => {
      await scope.register(fastifyAuth, options);
      scope.get(path, { config: { apiKey: { permissions: permissions ?? [] } } }, async (request) => ({
        keyId: request.apiKey?.id,
      }));
    });
  }
  await app.ready();
  return app;
}

/** Listens on 127.0.0.1, port 0; returns the base URL and a closer. */
export async function listen(
  app: { listen(port: number, host: string, cb: () => void): { address(): unknown; close(): void } } | FastifyInstance,
): Promise<{ base: string; close(): Promise<void> }> {
  if ('inject' in app) {
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    return { base, close: () => app.close() };
  }
  const server = await new Promise<{ address(): unknown; close(cb: () => void): void }>((resolve) => {
    const srv = app.listen(0, '127.0.0.1', () => resolve(srv as never));
  });
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

/** Sends a case through Fastify's `inject()` (from 127.0.0.1, its default remote address). */
export function sendByInject(app: () => FastifyInstance): SendCase {
  return async ({ path, headers }) => {
    const res = await app().inject({ method: 'GET', url: path, headers });
    const pick = (h: string) => {
      const v = res.headers[h];
      return v === undefined ? null : String(v);
    };
    return {
      status: res.statusCode,
      headers: Object.fromEntries(HEADERS.map((h) => [h, pick(h)])) as Observed['headers'],
      body: res.body,
    };
  };
}
