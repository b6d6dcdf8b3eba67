import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import express4 from 'express4';
import { CachedKeyStore, generateKey, type PublicKey } from 'keygate';
import { apiKeyAuth } from 'keygate/express';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { failingStore, seededStore } from '../support/fixtures.js';

const s = await seededStore();
const servers: Array<{ close(): void }> = [];
afterAll(() => {
  for (const server of servers) server.close();
});

async function serve(app: {
  listen(port: number, host: string, cb: () => void): { address(): unknown; close(): void };
}) {
  const server = await new Promise<{ address(): unknown; close(): void }>((resolve) => {
    const srv = app.listen(0, '127.0.0.1', () => resolve(srv));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as typeof express],
])('%s middleware', (_, make) => {
  const app = make();
  app.set('trust proxy', false);
  app.post('/v1/email/verify', apiKeyAuth({ store: s.store, permissions: ['email:verify'] }), (req, res) => {
    expectTypeOf(req.apiKey).toEqualTypeOf<PublicKey | undefined>();
    res.json({ keyId: req.apiKey?.id, mode: req.apiKey?.mode });
  });
  app.get('/down', apiKeyAuth({ store: failingStore, retryAfterMs: 7000 }), (_req, res) => {
    res.send('never');
  });
  app.get(
    '/custom',
    apiKeyAuth({
      store: s.store,
      onDenied: (failure, _req, res) => {
        res.status(failure.status).json({ error: failure.code });
      },
    }),
    (_req, res) => {
      res.send('ok');
    },
  );
  app.get(
    '/silent-hook',
    apiKeyAuth({
      store: s.store,
      onDenied: () => {},
    }),
    (_req, res) => {
      res.send('must not be reached');
    },
  );
  app.get(
    '/broken-hook',
    apiKeyAuth({
      store: s.store,
      onDenied: () => {
        throw new Error('hook bug');
      },
    }),
    (_req, res) => {
      res.send('must not be reached');
    },
  );
  const base = serve(app);

  it('lets a valid key through and sets req.apiKey to the public view', async () => {
    const res = await fetch(`${await base}/v1/email/verify`, {
      method: 'POST',
      headers: { 'x-api-key': s.open.secret },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ keyId: s.open.key.id, mode: 'test' });
  });

  it('answers a missing key with 401 problem+json naming the header in WWW-Authenticate', async () => {
    const res = await fetch(`${await base}/v1/email/verify`, { method: 'POST' });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="x-api-key"');
    expect(await res.json()).toEqual({
      type: 'urn:keygate:problem:missing_api_key',
      title: 'Missing API key',
      status: 401,
      detail: 'The request carries no API key.',
      code: 'missing_api_key',
    });
  });

  it('answers an address outside the allow list with 403 (req.ip, 127.0.0.1 here)', async () => {
    const res = await fetch(`${await base}/v1/email/verify`, {
      method: 'POST',
      headers: { 'x-api-key': s.valid.secret },
    });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('ip_not_allowed');
  });

  it('ignores X-Forwarded-For while trust proxy is off', async () => {
    const res = await fetch(`${await base}/v1/email/verify`, {
      method: 'POST',
      headers: { 'x-api-key': s.valid.secret, 'x-forwarded-for': '203.0.113.7' },
    });
    expect(res.status).toBe(403);
  });

  it('answers a failing store with 503 and Retry-After', async () => {
    const res = await fetch(`${await base}/down`, { headers: { 'x-api-key': generateKey() } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('7');
    expect((await res.json()).code).toBe('key_store_unavailable');
  });

  it('lets onDenied write its own response', async () => {
    const res = await fetch(`${await base}/custom`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'missing_api_key' });
  });

  it('sends the standard denial when onDenied returns without answering', async () => {
    const res = await fetch(`${await base}/silent-hook`);
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('missing_api_key');
  });

  it('sends the standard denial when onDenied throws; the route is never reached', async () => {
    const res = await fetch(`${await base}/broken-hook`, { headers: { 'x-api-key': s.revoked.secret } });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('revoked_api_key');
  });
});

describe('Express trust proxy decides the client address', () => {
  it('with trust proxy set to loopback, the right-most untrusted X-Forwarded-For address counts', async () => {
    const app = express();
    app.set('trust proxy', 'loopback');
    app.get('/', apiKeyAuth({ store: s.store }), (req, res) => {
      res.send(req.ip);
    });
    const base = await serve(app);
    const send = (xff: string) => fetch(base, { headers: { 'x-api-key': s.valid.secret, 'x-forwarded-for': xff } });
    const allowed = await send('198.51.100.1, 203.0.113.7');
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toBe('203.0.113.7');
    // The left-most entry is client-controlled and must not count.
    expect((await send('203.0.113.7, 198.51.100.1')).status).toBe(403);
  });
});

describe('Express middleware on the cached path', () => {
  it('calls next() before it returns: no promise between a cached key and the route', async () => {
    const cached = new CachedKeyStore(s.store);
    const middleware = apiKeyAuth({ store: cached, permissions: ['email:verify'] });
    const req = { headers: { 'x-api-key': s.valid.secret }, ip: '203.0.113.7' } as unknown as Request;
    let calls = 0;
    const next = () => calls++;
    middleware(req, {} as Response, next); // first request: the store is asked, next() comes later
    expect(calls).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toBe(1);
    middleware(req, {} as Response, next);
    expect(calls).toBe(2);
    expect(req.apiKey?.id).toBe(s.valid.key.id);
  });
});
