// Who decides the client address. Express and Fastify: their trust-proxy setting, seen through real
// sockets on 127.0.0.1. Fetch and Hono: only the configured clientIp, never a header by default.
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import fastify4 from 'fastify4';
import { Hono } from 'hono';
import { clientIp, withApiKeyAuth } from 'keygate/fetch';
import { type ApiKeyEnv, apiKeyAuth } from 'keygate/hono';
import { afterAll, describe, expect, it } from 'vitest';
import { seedCaseStore } from './fixtures.js';
import { type NestPlatform, serveCheckRoute, type Trust } from './nest/app.js';
import { createExpressApp, createFastifyApp, listen } from './servers.js';

const { store, secrets, ids } = await seedCaseStore();
const key = secrets.allowListed;
const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

async function served(app: Parameters<typeof listen>[0]): Promise<string> {
  const { base, close } = await listen(app);
  closers.push(close);
  return base;
}

async function servedByNest(platform: NestPlatform, trust: Trust): Promise<string> {
  const { base, close } = await serveCheckRoute(platform, store, trust);
  closers.push(close);
  return base;
}

const servers = {
  'Express, trust proxy off': () => served(createExpressApp(store, false)),
  'Express, trust proxy loopback': () => served(createExpressApp(store, 'loopback')),
  'Fastify 5, trustProxy off': async () => served(await createFastifyApp(store, false)),
  'Fastify 5, trustProxy 127.0.0.1': async () => served(await createFastifyApp(store, '127.0.0.1')),
  'Fastify 4, trustProxy off': async () => served(await createFastifyApp(store, false, fastify4 as never)),
  'Fastify 4, trustProxy loopback': async () => served(await createFastifyApp(store, 'loopback', fastify4 as never)),
  'Nest on Express, trust proxy off': () => servedByNest('express', false),
  'Nest on Express, trust proxy loopback': () => servedByNest('express', 'loopback'),
  'Nest on Fastify, trustProxy off': () => servedByNest('fastify', false),
  'Nest on Fastify, trustProxy 127.0.0.1': () => servedByNest('fastify', 'loopback'),
};

// The key allows 203.0.113.0/24; the socket peer is 127.0.0.1.
describe.each([
  ['Express, trust proxy off', '203.0.113.7', 403],
  ['Express, trust proxy loopback', '203.0.113.7', 200],
  ['Express, trust proxy loopback', '198.51.100.1, 203.0.113.7', 200],
  ['Express, trust proxy loopback', '203.0.113.7, 198.51.100.1', 403],
  ['Fastify 5, trustProxy off', '203.0.113.7', 403],
  ['Fastify 5, trustProxy 127.0.0.1', '203.0.113.7', 200],
  ['Fastify 5, trustProxy 127.0.0.1', '198.51.100.1, 203.0.113.7', 200],
  ['Fastify 5, trustProxy 127.0.0.1', '203.0.113.7, 198.51.100.1', 403],
  ['Fastify 4, trustProxy off', '203.0.113.7', 403],
  ['Fastify 4, trustProxy loopback', '198.51.100.1, 203.0.113.7', 200],
  ['Fastify 4, trustProxy loopback', '203.0.113.7, 198.51.100.1', 403],
  ['Nest on Express, trust proxy off', '203.0.113.7', 403],
  ['Nest on Express, trust proxy loopback', '203.0.113.7', 200],
  ['Nest on Express, trust proxy loopback', '203.0.113.7, 198.51.100.1', 403],
  ['Nest on Fastify, trustProxy off', '203.0.113.7', 403],
  ['Nest on Fastify, trustProxy 127.0.0.1', '203.0.113.7', 200],
  ['Nest on Fastify, trustProxy 127.0.0.1', '203.0.113.7, 198.51.100.1', 403],
] as const)('%s', (server, xff, status) => {
  it(`X-Forwarded-For: ${xff} -> ${status} (only the right-most untrusted address counts)`, async () => {
    const base = await servers[server]();
    const res = await fetch(`${base}/v1/check`, { headers: { 'x-api-key': key, 'x-forwarded-for': xff } });
    expect(res.status).toBe(status);
    if (status === 200) expect(await res.json()).toEqual({ keyId: ids.allowListed });
  });
});

describe('Fetch: the address comes only from clientIp', () => {
  const echo = (_request: Request, k: { id: string }) => Response.json({ keyId: k.id });
  const bare = withApiKeyAuth(echo, { store });
  const cloudflare = withApiKeyAuth(echo, { store, clientIp: clientIp.cloudflare });
  const throwing = withApiKeyAuth(echo, {
    store,
    clientIp: () => {
      throw new Error('no address');
    },
  });
  const send = (handler: typeof bare, headers: Record<string, string>) =>
    handler(new Request('http://api.test/', { headers: { 'x-api-key': key, ...headers } }));

  it.each([
    ['no clientIp ignores X-Forwarded-For', bare, { 'x-forwarded-for': '203.0.113.7' }, 403],
    ['no clientIp ignores CF-Connecting-IP', bare, { 'cf-connecting-ip': '203.0.113.7' }, 403],
    ['clientIp.cloudflare reads CF-Connecting-IP', cloudflare, { 'cf-connecting-ip': '203.0.113.7' }, 200],
    ['clientIp.cloudflare ignores X-Forwarded-For', cloudflare, { 'x-forwarded-for': '203.0.113.7' }, 403],
    ['a clientIp that throws means no address', throwing, { 'cf-connecting-ip': '203.0.113.7' }, 403],
  ])('%s', async (_, handler, headers, status) => {
    expect((await send(handler, headers)).status).toBe(status);
  });

  it('the open key needs no address', async () => {
    const res = await bare(new Request('http://api.test/', { headers: { 'x-api-key': secrets.open } }));
    expect(res.status).toBe(200);
  });
});

describe('Hono: the address comes only from clientIp (real socket through @hono/node-server)', () => {
  function start(options: Parameters<typeof apiKeyAuth>[0]): Promise<string> {
    const app = new Hono<ApiKeyEnv>();
    app.get('/', apiKeyAuth(options), (c) => c.json({ keyId: c.get('apiKey').id }));
    return new Promise((resolve) => {
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
        closers.push(() => new Promise((r) => server.close(() => r())));
        resolve(`http://127.0.0.1:${info.port}`);
      });
    });
  }

  it.each([
    ['no clientIp ignores X-Forwarded-For', { store }, 403],
    [
      'getConnInfo sees the socket (127.0.0.1), not X-Forwarded-For',
      { store, clientIp: (c) => getConnInfo(c).remote.address },
      403,
    ],
    [
      'clientIp.cloudflare-style header reading is what makes a header count',
      { store, clientIp: (c) => clientIp.cloudflare(c.req.raw) },
      200,
    ],
  ] as Array<[string, Parameters<typeof apiKeyAuth>[0], number]>)('%s', async (_, options, status) => {
    const base = await start(options);
    const res = await fetch(base, {
      headers: { 'x-api-key': key, 'x-forwarded-for': '203.0.113.7', 'cf-connecting-ip': '203.0.113.7' },
    });
    expect(res.status).toBe(status);
  });
});
