import { Hono } from 'hono';
import { createDenialResponder } from 'keygate';
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

  it.each([
    [{}, /store/],
    [{ store, header: 'x key' }, /header/],
    [{ store, prefix: 'MK' }, /prefix/],
    [{ store, clientIp: 'x-real-ip' }, /clientIp/],
  ])('bad options %j throw at construction', (options, message) => {
    expect(() => apiKeyAuth(options as never)).toThrow(message);
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

  it("from Node's request headers on @hono/node-server, without building a Fetch Headers", async () => {
    const { app } = appWith();
    // What @hono/node-server passes as env: Node's IncomingMessage (headers object and rawHeaders list).
    const incoming = { headers: { 'x-api-key': secrets.open }, rawHeaders: ['x-api-key', secrets.open] };
    const res = await app.request('/v1/me', {}, { incoming, outgoing: {} });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ keyId: ids.open });
  });
});
