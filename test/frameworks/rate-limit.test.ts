// Rate limits through each adapter beyond the shared case table: the exact header bytes, a window
// used up request by request, cost functions that read the framework's own request, and handler
// responses whose headers cannot change.
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { MemoryRateLimiter, type RateLimitOptions } from 'keygate';
import { type AdapterRequest, createDenialResponder, rateLimitHeaderFields } from 'keygate/adapter-kit';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { withApiKeyAuth } from 'keygate/fetch';
import { type ApiKeyEnv, apiKeyAuth as honoAuth } from 'keygate/hono';
import { afterAll, describe, expect, it } from 'vitest';
import { seedCaseStore } from './fixtures.js';
import { listen } from './servers.js';

const { store, secrets } = await seedCaseStore();
const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

const NOW = 1_700_000_000_000;

describe('the rate-limit header fields', () => {
  it('are written exactly as the IETF httpapi draft spells them, in whole seconds rounded up', () => {
    expect(rateLimitHeaderFields({ limit: 100, remaining: 99, resetMs: 59_001, windowMs: 60_000 })).toEqual({
      'ratelimit-policy': '"default";q=100;w=60',
      ratelimit: '"default";r=99;t=60',
    });
    expect(rateLimitHeaderFields({ limit: 5, remaining: 0, resetMs: 1, windowMs: 500 })).toEqual({
      'ratelimit-policy': '"default";q=5;w=1',
      ratelimit: '"default";r=0;t=1',
    });
  });

  it('make a 429 problem+json with Retry-After (at least 1 s) beside them', () => {
    const denial = createDenialResponder()({
      code: 'rate_limited',
      rateLimit: { limit: 10, remaining: 0, resetMs: 12_300, windowMs: 30_000 },
    });
    expect(denial.status).toBe(429);
    expect(denial.headers).toEqual({
      'content-type': 'application/problem+json',
      'cache-control': 'no-store',
      'retry-after': '13',
      'ratelimit-policy': '"default";q=10;w=30',
      ratelimit: '"default";r=0;t=13',
    });
    expect(JSON.parse(denial.body)).toMatchObject({ status: 429, code: 'rate_limited', title: 'Rate limit exceeded' });
    const ended = createDenialResponder()({
      code: 'rate_limited',
      rateLimit: { limit: 1, remaining: 0, resetMs: 0, windowMs: 1000 },
    });
    expect(ended.headers['retry-after']).toBe('1');
  });
});

/** Sends `count` requests with the `limited` key (10 units per 30 s) and returns status and fields of each. */
async function burst(url: string, count: number, init: RequestInit = {}) {
  const out: Array<[number, string | null, string | null]> = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(url, { ...init, headers: { 'x-api-key': secrets.limited, ...init.headers } });
    await res.arrayBuffer();
    out.push([res.status, res.headers.get('ratelimit'), res.headers.get('retry-after')]);
  }
  return out;
}

/** Each adapter serving POST /v1/batch, whose cost is the `n` of the query string, read from its own request. */
async function servers(make: () => RateLimitOptions<never>): Promise<Array<[string, string]>> {
  const ex = express();
  ex.post(
    '/v1/batch',
    expressAuth({
      store,
      rateLimit: { ...make(), cost: ({ native }: AdapterRequest<express.Request>) => Number(native.query.n) },
    }),
    (_req, res) => {
      res.json({ ok: true });
    },
  );
  const fa = Fastify();
  await fa.register(fastifyAuth, {
    store,
    rateLimit: {
      ...make(),
      cost: ({ native }) => Number((native.query as { n: string }).n),
    },
  });
  fa.post('/v1/batch', async () => ({ ok: true }));
  const fetchHandler = withApiKeyAuth(() => Response.json({ ok: true }), {
    store,
    rateLimit: { ...make(), cost: ({ native }) => Number(new URL(native.url).searchParams.get('n')) },
  });
  const hono = new Hono<ApiKeyEnv>();
  hono.post(
    '/v1/batch',
    honoAuth({ store, rateLimit: { ...make(), cost: ({ native }) => Number(native.req.query('n')) } }),
    (c) => c.json({ ok: true }),
  );
  const bases = await Promise.all([listen(ex), listen(fa)]);
  for (const b of bases) closers.push(b.close);
  const fetchBase = await nodeServer((request) => fetchHandler(request));
  const honoBase = await nodeServer((request) => hono.fetch(request));
  return [
    ['Express', bases[0]?.base as string],
    ['Fastify', bases[1]?.base as string],
    ['Fetch', fetchBase],
    ['Hono', honoBase],
  ];
}

function nodeServer(fetch: (request: Request) => Response | Promise<Response>): Promise<string> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      closers.push(() => new Promise((r) => server.close(() => r())));
      resolve(`http://127.0.0.1:${info.port}`);
    });
  });
}

describe.each(await servers(() => ({ limiter: new MemoryRateLimiter({ clock: () => NOW }) })))('%s', (_, base) => {
  it('counts a window down by each request’s cost (read from the framework’s request), then answers 429', async () => {
    const sent = await burst(`${base}/v1/batch?n=4`, 3, { method: 'POST' });
    expect(sent).toEqual([
      [200, '"default";r=6;t=30', null],
      [200, '"default";r=2;t=30', null],
      [429, '"default";r=2;t=30', '30'],
    ]);
    expect(await burst(`${base}/v1/batch?n=2`, 2, { method: 'POST' })).toEqual([
      [200, '"default";r=0;t=30', null],
      [429, '"default";r=0;t=30', '30'],
    ]);
  });
});

describe('a handler response whose headers cannot change', () => {
  const rateLimit = { limiter: new MemoryRateLimiter({ clock: () => NOW }), cost: 0 };

  it('Fetch: is copied, so the redirect still carries the fields', async () => {
    const handler = withApiKeyAuth(() => Response.redirect('https://example.test/elsewhere', 303), {
      store,
      rateLimit,
    });
    const res = await handler(new Request('http://api.test/', { headers: { 'x-api-key': secrets.limited } }));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('https://example.test/elsewhere');
    expect(res.headers.get('ratelimit')).toBe('"default";r=10;t=30');
  });

  it('Hono: a raw Response, a redirect and an error page all carry the fields', async () => {
    const app = new Hono<ApiKeyEnv>();
    app.use('/v1/*', honoAuth({ store, rateLimit }));
    app.get('/v1/raw', () => new Response('raw'));
    app.get('/v1/redirect', () => Response.redirect('https://example.test/', 302));
    app.get('/v1/throws', () => {
      throw new Error('boom');
    });
    app.onError((_err, c) => c.text('failed', 500));
    for (const [path, status] of [
      ['/v1/raw', 200],
      ['/v1/redirect', 302],
      ['/v1/throws', 500],
    ] as const) {
      const res = await app.request(path, { headers: { 'x-api-key': secrets.limited } });
      expect({ path, status: res.status, fields: res.headers.get('ratelimit-policy') }).toEqual({
        path,
        status,
        fields: '"default";q=10;w=30',
      });
    }
  });

  it('Express: fields set before next() survive a handler that writes its own head', async () => {
    const app = express();
    app.get('/v1/raw', expressAuth({ store, rateLimit }), (_req, res) => {
      res.writeHead(202, { 'content-type': 'text/plain' }).end('accepted');
    });
    const { base, close } = await listen(app);
    closers.push(close);
    const res = await fetch(`${base}/v1/raw`, { headers: { 'x-api-key': secrets.limited } });
    expect(res.status).toBe(202);
    expect(res.headers.get('ratelimit')).toBe('"default";r=10;t=30');
  });
});

describe('Express: a batch route that reads its body first', () => {
  it('costs the batch size', async () => {
    const app = express();
    const limiter = new MemoryRateLimiter({ clock: () => NOW });
    app.post(
      '/v1/batch',
      express.json(),
      expressAuth({
        store,
        rateLimit: {
          limiter,
          cost: ({ native }: AdapterRequest<express.Request>) => (native.body as { emails: string[] }).emails.length,
        },
      }),
      (_req, res) => {
        res.json({ ok: true });
      },
    );
    const { base, close } = await listen(app);
    closers.push(close);
    const post = (emails: string[]) =>
      fetch(`${base}/v1/batch`, {
        method: 'POST',
        headers: { 'x-api-key': secrets.limited, 'content-type': 'application/json' },
        body: JSON.stringify({ emails }),
      });
    expect((await post(['a@example.com', 'b@example.com', 'c@example.com'])).headers.get('ratelimit')).toBe(
      '"default";r=7;t=30',
    );
    expect((await post(Array.from({ length: 8 }, (_, i) => `${i}@example.com`))).status).toBe(429);
  });
});
