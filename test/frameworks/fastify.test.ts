import Fastify from 'fastify';
import fastify4 from 'fastify4';
import { CachedKeyStore } from 'keygate';
import { createDenialResponder } from 'keygate/adapter-kit';
import apiKeyAuthDefault, { apiKeyAuth } from 'keygate/fastify';
import { describe, expect, it } from 'vitest';
import { seedCaseStore } from './fixtures.js';

const { store, secrets, ids } = await seedCaseStore();
const standard = createDenialResponder();

describe.each([
  ['Fastify 5', Fastify],
  ['Fastify 4', fastify4 as unknown as typeof Fastify],
])('%s plugin', (_, make) => {
  async function appWith(options: Partial<Parameters<typeof apiKeyAuth>[1]> = {}) {
    const app = make();
    let parsed = 0;
    let handled = 0;
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      parsed++;
      done(null, JSON.parse(String(body)));
    });
    await app.register(apiKeyAuth, { store, ...options });
    const reply = async (request: { apiKey: { id: string } | null }) => {
      handled++;
      return { keyId: request.apiKey?.id ?? null };
    };
    app.post('/plain', reply);
    app.post('/verify', { config: { apiKey: { permissions: ['email:verify'] } } }, reply);
    app.get('/public', { config: { apiKey: false } }, reply);
    await app.ready();
    return { app, counts: () => ({ parsed, handled }) };
  }
  const post = (app: Awaited<ReturnType<typeof appWith>>['app'], url: string, key?: string) =>
    app.inject({ method: 'POST', url, payload: { email: 'a@b.c' }, headers: key ? { 'x-api-key': key } : {} });

  it('is also the default export', () => {
    expect(apiKeyAuthDefault).toBe(apiKeyAuth);
  });

  it('refuses in onRequest, before the body is parsed or the handler runs', async () => {
    const { app, counts } = await appWith();
    const res = await post(app, '/plain', secrets.revoked);
    expect(res.statusCode).toBe(401);
    expect(counts()).toEqual({ parsed: 0, handled: 0 });
  });

  it.each([
    ['a route without config takes the plugin permissions only', '/plain', 'readOnly', 200],
    ['a route that narrows requires its permissions too', '/verify', 'readOnly', 403],
    ['...all of them (plugin: email:read, route: email:verify)', '/verify', 'open', 403],
    ['a key without email:read fails the plugin permission', '/plain', 'open', 403],
  ] as const)('%s', async (_, url, key, status) => {
    const { app } = await appWith({ permissions: ['email:read'] });
    const res = await post(app, url, secrets[key]);
    expect(res.statusCode).toBe(status);
    if (status === 200) expect(res.json()).toEqual({ keyId: ids[key] });
  });

  it('a route that opts out needs no key, and request.apiKey stays null', async () => {
    const { app } = await appWith();
    const res = await app.inject({ method: 'GET', url: '/public' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ keyId: null });
  });

  it('onDenied replaces the reply', async () => {
    const { app } = await appWith({
      onDenied: (failure, _request, reply) => {
        reply.code(418).send({ nope: failure.code });
      },
    });
    const res = await post(app, '/plain');
    expect(res.statusCode).toBe(418);
    expect(res.json()).toEqual({ nope: 'missing_api_key' });
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('hook bug');
      },
    ],
    ['rejects', async () => Promise.reject(new Error('hook bug'))],
    ['sends nothing', () => undefined],
  ])('when onDenied %s, the standard denial is sent and the handler never runs', async (_, onDenied) => {
    const { app, counts } = await appWith({ onDenied });
    const res = await post(app, '/plain', secrets.expired);
    const want = standard({ code: 'expired_api_key' });
    expect(res.statusCode).toBe(want.status);
    expect(res.body).toBe(want.body);
    expect(counts().handled).toBe(0);
  });

  it('a route added before the plugin still gets its own permissions', async () => {
    const app = make();
    app.get('/early', { config: { apiKey: { permissions: ['email:verify'] } } }, async () => 'early');
    await app.register(apiKeyAuth, { store });
    const res = await app.inject({ method: 'GET', url: '/early', headers: { 'x-api-key': secrets.readOnly } });
    expect(res.json().code).toBe('insufficient_permissions');
  });

  it('with a route added before the plugin, each route is still checked exactly once per request', async () => {
    const app = make();
    let checks = 0;
    const counting = {
      findByHash: (hash: string) => {
        checks++;
        return store.findByHash(hash);
      },
    };
    app.get('/early', async () => 'early');
    await app.register(apiKeyAuth, { store: counting });
    app.get('/late', async () => 'late');
    app.get('/late-public', { config: { apiKey: false } }, async () => 'public');
    for (const url of ['/early', '/late']) {
      const before = checks;
      const res = await app.inject({ method: 'GET', url, headers: { 'x-api-key': secrets.open } });
      expect(res.statusCode).toBe(200);
      expect(checks - before).toBe(1);
    }
    expect((await app.inject({ method: 'GET', url: '/late-public' })).statusCode).toBe(200);
  });

  it('refuses an unknown URL for its key as it would a route, so that routes cannot be discovered without one', async () => {
    const app = make();
    await app.register(apiKeyAuth, { store });
    app.get('/known', async () => 'known');
    const unknown = await app.inject({ method: 'GET', url: '/unknown' });
    expect(unknown.json().code).toBe('missing_api_key');
    const known = await app.inject({ method: 'GET', url: '/known' });
    expect(known.json().code).toBe('missing_api_key');
    expect(
      (await app.inject({ method: 'GET', url: '/unknown', headers: { 'x-api-key': secrets.open } })).statusCode,
    ).toBe(404);
  });

  it("checks the key before a route's own onRequest hooks, in a child context too", async () => {
    const app = make();
    let reached = 0;
    await app.register(apiKeyAuth, { store });
    await app.register(async (child) => {
      const own = (_request: unknown, _reply: unknown, done: () => void) => {
        reached++;
        done();
      };
      child.get('/child', { onRequest: own }, async () => 'child');
    });
    const denied = await app.inject({ method: 'GET', url: '/child' });
    expect(denied.json().code).toBe('missing_api_key');
    expect(reached).toBe(0);
    const allowed = await app.inject({ method: 'GET', url: '/child', headers: { 'x-api-key': secrets.open } });
    expect(allowed.statusCode).toBe(200);
    expect(reached).toBe(1);
  });

  it('a bad route config fails when the route is added', async () => {
    const app = make();
    await app.register(apiKeyAuth, { store });
    await app.after();
    expect(() => app.get('/x', { config: { apiKey: { permissions: [''] } } }, async () => 'x')).toThrow(/permissions/);
  });
});

describe('Fastify plugin on the cached path', () => {
  it('calls done() before the hook returns: no promise between a cached key and the route', async () => {
    const hooks: Record<string, (...args: unknown[]) => void> = {};
    const instance = {
      decorateRequest: () => {},
      addHook: (name: string, hook: (...args: unknown[]) => void) => {
        hooks[name] = hook;
      },
      printRoutes: () => '',
    };
    await (apiKeyAuth as unknown as (f: unknown, o: unknown) => Promise<void>)(instance, {
      store: new CachedKeyStore(store),
    });
    // No route existed before the plugin: the instance-wide hook lets a routed request through at
    // once (without reading its routeOptions), and the route's own hook does the work.
    let passed = 0;
    hooks.onRequest?.({ is404: false }, {}, () => passed++);
    expect(passed).toBe(1);
    const route: { url: string; config: object; onRequest?: ((...args: unknown[]) => void)[] } = {
      url: '/v1/me',
      config: {},
    };
    hooks.onRoute?.(route);
    const onRequest = route.onRequest?.[0];
    const request = {
      headers: { 'x-api-key': secrets.open },
      raw: { rawHeaders: ['X-API-Key', secrets.open] },
      ip: '203.0.113.7',
      url: '/v1/me',
      apiKey: null as { id: string } | null,
    };
    let calls = 0;
    const done = () => calls++;
    onRequest?.(request, {}, done); // first request: the store is asked, done() comes later
    expect(calls).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toBe(1);
    onRequest?.(request, {}, done);
    expect(calls).toBe(2);
    expect(request.apiKey?.id).toBe(ids.open);
  });
});
