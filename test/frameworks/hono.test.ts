import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { CachedKeyStore } from 'keygate';
import { createDenialResponder } from 'keygate/adapter-kit';
import { type ApiKeyEnv, apiKeyAuth } from 'keygate/hono';
import { describe, expect, it } from 'vitest';
import { seedCaseStore } from './fixtures.js';

const { store, secrets, ids } = await seedCaseStore();
const revoked = createDenialResponder()({ code: 'revoked_api_key' });

function appWith(options: Omit<Parameters<typeof apiKeyAuth>[0], 'store'> = {}) {
  let handled = 0;
  const app = new Hono<ApiKeyEnv>();
  app.use('/v1/*', apiKeyAuth({ store, ...options }));
  app.get('/v1/me', (c) => {
    handled++;
    return c.json({ keyId: c.get('apiKey').id });
  });
  app.get('/public', (c) => c.text('ok'));
  return { app, handled: () => handled };
}
const get = (app: Hono<ApiKeyEnv>, path: string, key?: string) =>
  app.request(path, { headers: key ? { 'x-api-key': key } : {} });

describe('Hono apiKeyAuth', () => {
  it('sets c.get("apiKey") for the routes it guards, and leaves others alone', async () => {
    const { app } = appWith();
    expect(await (await get(app, '/v1/me', secrets.open)).json()).toEqual({ keyId: ids.open });
    expect((await get(app, '/public')).status).toBe(200);
  });

  it('onDenied replaces the response in Hono style', async () => {
    const { app, handled } = appWith({ onDenied: (failure, c) => c.json({ error: failure.code }, 401) });
    const res = await get(app, '/v1/me');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'missing_api_key' });
    expect(handled()).toBe(0);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('bug');
      },
    ],
    ['rejects', () => Promise.reject(new Error('bug'))],
    ['returns something that is not a Response', () => undefined as unknown as Response],
  ])('when onDenied %s, the standard denial is sent and the route never runs', async (_, onDenied) => {
    const { app, handled } = appWith({ onDenied });
    const res = await get(app, '/v1/me', secrets.revoked);
    expect(res.status).toBe(revoked.status);
    expect(await res.text()).toBe(revoked.body);
    expect(handled()).toBe(0);
  });
});

describe('Hono apiKeyAuth reads the key', () => {
  it('from the Fetch request, not from a binding that happens to be named `incoming`', async () => {
    const { app } = appWith();
    const env = { incoming: { headers: { 'x-api-key': secrets.open } } }; // e.g. a Worker binding
    const res = await app.request('/v1/me', {}, env);
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('missing_api_key');
  });

  // What @hono/node-server passes as env: Node's request (a headers object and a rawHeaders list).
  const nodeRequest = (headers: Record<string, string>) => ({
    incoming: { headers, rawHeaders: Object.entries(headers).flat() },
    outgoing: {},
  });

  it.each([
    ['a key only in the Request is accepted', { 'x-api-key': secrets.open }, {}, 200],
    ['a key only in the Node request is not', {}, { 'x-api-key': secrets.open }, 401],
  ])("from the Request Hono handles, not Node's request in env: %s", async (_, request, node, status) => {
    const { app } = appWith();
    const res = await app.request('/v1/me', { headers: request }, nodeRequest(node));
    expect(res.status).toBe(status);
  });

  it('on @hono/node-server, after a middleware replaced the request', async () => {
    const app = new Hono<ApiKeyEnv>();
    // Takes the key from `Authorization: ApiKey <key>`: the request Hono handles changes, Node's does not.
    app.use('/v1/*', async (c, next) => {
      const headers = new Headers(c.req.raw.headers);
      headers.set('x-api-key', headers.get('authorization')?.replace(/^ApiKey /, '') ?? '');
      c.req.raw = new Request(c.req.raw, { headers });
      await next();
    });
    app.use('/v1/*', apiKeyAuth({ store }));
    app.get('/v1/me', (c) => c.json({ keyId: c.get('apiKey').id }));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/v1/me`, {
        headers: { authorization: `ApiKey ${secrets.open}` },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ keyId: ids.open });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('Hono apiKeyAuth on @hono/node-server reads the request as it is now', () => {
  // keygate reads Node's header object only while the light Request's headers were never built; once a
  // middleware has built (and so may have changed) them, those are what count.
  it.each([
    ['changed in place to a valid key', (h: Headers) => h.set('x-api-key', secrets.open), 'nothing', 200],
    ['a valid key removed in place', (h: Headers) => h.delete('x-api-key'), 'open', 401],
    ['headers read but left alone', (_: Headers) => {}, 'open', 200],
  ] as const)('headers %s', async (_, change, sent, status) => {
    const app = new Hono<ApiKeyEnv>();
    app.use('/v1/*', async (c, next) => {
      change(c.req.raw.headers);
      await next();
    });
    app.use('/v1/*', apiKeyAuth({ store }));
    app.get('/v1/me', (c) => c.json({ keyId: c.get('apiKey').id }));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const headers: Record<string, string> = sent === 'open' ? { 'x-api-key': secrets.open } : {};
      expect((await fetch(`http://127.0.0.1:${port}/v1/me`, { headers })).status).toBe(status);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('Hono apiKeyAuth on the cached path', () => {
  it('calls next() before it returns: no promise between a cached key and the route', async () => {
    const middleware = apiKeyAuth({ store: new CachedKeyStore(store), clientIp: () => '203.0.113.7' });
    const vars: Record<string, unknown> = {};
    const c = {
      req: { raw: new Request('http://api.test/v1/me', { headers: { 'x-api-key': secrets.open } }) },
      set: (name: string, value: unknown) => {
        vars[name] = value;
      },
    } as unknown as Parameters<typeof middleware>[0];
    let calls = 0;
    const next = async () => {
      calls++;
    };
    await middleware(c, next); // first request: the store is asked
    expect(calls).toBe(1);
    const pending = middleware(c, next);
    expect(calls).toBe(2); // the cached key reached next() before the middleware returned
    await pending;
    expect((vars.apiKey as { id: string }).id).toBe(ids.open);
  });
});
