// The Hono middleware reads the key from the request Hono handles as it is when the middleware runs,
// on @hono/node-server as with app.request(): changed in place, removed or replaced by an earlier
// middleware, what that middleware left is what counts.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { apiKeyAuth } from 'keygate/hono';
import { describe, expect, it } from 'vitest';
import { seedCaseStore } from './fixtures.js';

const { store, secrets } = await seedCaseStore();
type Step = (raw: Request) => Request | undefined;

function appWith(step: { current: Step }) {
  const app = new Hono();
  app.use('*', async (c, next) => {
    const replaced = step.current(c.req.raw);
    if (replaced) c.req.raw = replaced;
    await next();
  });
  app.use('*', apiKeyAuth({ store }));
  app.get('/', (c) => c.json({ key: (c.get('apiKey' as never) as { id: string }).id }));
  return app;
}

const untouched: Step = () => undefined;
const setKey =
  (key: string): Step =>
  (raw) => {
    raw.headers.set('x-api-key', key);
    return undefined;
  };
const removeKey: Step = (raw) => {
  raw.headers.delete('x-api-key');
  return undefined;
};
const replaceWith =
  (key: string): Step =>
  (raw) =>
    new Request(raw, { headers: { 'x-api-key': key } });

describe('the Hono middleware reads the request as it is now', () => {
  it('on @hono/node-server, request after request', async () => {
    const step = { current: untouched };
    const server = serve({ fetch: appWith(step).fetch, port: 0, hostname: '127.0.0.1' });
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const ask = async (next: Step, key?: string) => {
      step.current = next;
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: key ? { 'x-api-key': key } : {} });
      return res.status;
    };
    try {
      expect(await ask(untouched, secrets.open)).toBe(200);
      expect(await ask(untouched, 'mk_live_not-a-key')).toBe(401);
      expect(await ask(setKey(secrets.open), 'mk_live_not-a-key')).toBe(200);
      expect(await ask(setKey('mk_live_not-a-key'), secrets.open)).toBe(401);
      expect(await ask(removeKey, secrets.open)).toBe(401);
      expect(await ask(replaceWith(secrets.open))).toBe(200);
      expect(await ask(replaceWith('mk_live_not-a-key'), secrets.open)).toBe(401);
      expect(await ask(untouched, secrets.open)).toBe(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('with app.request()', async () => {
    const step = { current: untouched };
    const app = appWith(step);
    expect((await app.request('/', { headers: { 'x-api-key': secrets.open } })).status).toBe(200);
    step.current = removeKey;
    expect((await app.request('/', { headers: { 'x-api-key': secrets.open } })).status).toBe(401);
  });
});
