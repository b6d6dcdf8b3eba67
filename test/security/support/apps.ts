// One route, /v1/check (permission email:verify), on each adapter, with or without a trusted proxy
// in front, and a sender that writes header lines exactly as given (duplicates, case, latin-1 bytes).
import { request as httpRequest } from 'node:http';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { AuthenticateOptions, KeyStore } from 'keygate';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { withApiKeyAuth } from 'keygate/fetch';
import { type ApiKeyEnv, apiKeyAuth as honoAuth } from 'keygate/hono';
import { HEADERS, type Observed, observe } from '../../frameworks/cases.js';
import { listen } from '../../frameworks/servers.js';

/** A request as an attacker writes it: a path with any query, and header lines in order. */
export interface RawRequest {
  path: string;
  headers: ReadonlyArray<readonly [string, string]>;
}

export type SendRaw = (request: RawRequest) => Promise<Observed>;

/** The options every app gets: a route that needs `email:verify`, 503s with `Retry-After: 7`. */
export type AppOptions = Omit<AuthenticateOptions, 'permissions'> & { store: KeyStore; onDenied?: never };

/**
 * Sends over a real socket with node:http, so duplicate and oddly cased header lines reach the server
 * as written (a raw header list gets no automatic `Host`, so it is the first line).
 */
export function sendRaw(base: Promise<string> | string): SendRaw {
  return async ({ path, headers }) => {
    const url = new URL(path, await base);
    return new Promise<Observed>((resolve, reject) => {
      const req = httpRequest(
        url,
        { method: 'GET', headers: [['host', url.host], ...headers].flat() as string[] },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const pick = (h: string) => {
              const v = res.headers[h];
              return v === undefined ? null : String(v);
            };
            resolve({
              status: res.statusCode ?? 0,
              headers: Object.fromEntries(HEADERS.map((h) => [h, pick(h)])) as Observed['headers'],
              body: Buffer.concat(chunks).toString('utf8'),
            });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  };
}

/** The same request through a Fetch `Request` (header lines appended in order; values as latin-1 bytes). */
export function sendToFetch(handler: (request: Request) => Promise<Response> | Response): SendRaw {
  return async ({ path, headers }) => {
    const h = new Headers();
    for (const [name, value] of headers) h.append(name, value);
    return observe(await handler(new Request(new URL(path, 'http://api.test'), { headers: h })));
  };
}

const route = { permissions: ['email:verify'], retryAfterMs: 7000 } as const;
const fromProxy = (request: Request) => request.headers.get('x-forwarded-for') ?? undefined;

/**
 * The four adapters serving /v1/check, each on 127.0.0.1. `trusted`: a proxy on loopback is trusted
 * (Express `trust proxy` 'loopback', Fastify `trustProxy` '127.0.0.1', a `clientIp` reading
 * X-Forwarded-For for Fetch and Hono, standing in for a proxy that overwrites it); otherwise
 * X-Forwarded-For means nothing (Express and Fastify see 127.0.0.1, Fetch and Hono no address).
 */
export async function startApps(
  options: AppOptions,
  trusted: boolean,
): Promise<{ adapters: Array<[string, SendRaw]>; close(): Promise<void> }> {
  const closers: Array<() => Promise<void>> = [];
  const served = async (app: Parameters<typeof listen>[0]) => {
    const { base, close } = await listen(app);
    closers.push(close);
    return base;
  };

  const ex = express();
  ex.set('trust proxy', trusted ? 'loopback' : false);
  ex.get('/v1/check', expressAuth({ ...options, ...route }), (req, res) => {
    res.json({ keyId: req.apiKey?.id });
  });

  const fa = Fastify({ trustProxy: trusted ? '127.0.0.1' : false });
  await fa.register(fastifyAuth, { ...options, ...route });
  fa.get('/v1/check', async (request) => ({ keyId: request.apiKey?.id }));

  const clientIp = trusted ? fromProxy : undefined;
  const fetchHandler = withApiKeyAuth((_request, key) => Response.json({ keyId: key.id }), {
    ...options,
    ...route,
    clientIp,
  });
  const fetchApp = async (request: Request) =>
    new URL(request.url).pathname === '/v1/check' ? fetchHandler(request) : new Response('not found', { status: 404 });

  const hono = new Hono<ApiKeyEnv>();
  hono.get('/v1/check', honoAuth({ ...options, ...route, clientIp: clientIp && ((c) => clientIp(c.req.raw)) }), (c) =>
    c.json({ keyId: c.get('apiKey').id }),
  );
  const honoBase = new Promise<string>((resolve) => {
    const server = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      closers.push(() => new Promise((r) => server.close(() => r())));
      resolve(`http://127.0.0.1:${info.port}`);
    });
  });

  return {
    adapters: [
      ['Express', sendRaw(await served(ex))],
      ['Fastify 5', sendRaw(await served(fa))],
      ['Fetch', sendToFetch(fetchApp)],
      ['Hono (@hono/node-server)', sendRaw(await honoBase)],
    ],
    close: async () => {
      await Promise.all(closers.map((c) => c()));
    },
  };
}
