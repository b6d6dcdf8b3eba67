import type { AddressInfo } from 'node:net';
import express from 'express';
import { authenticate, CachedKeyStore, KeyManager, MemoryKeyStore } from 'keygate';
import { apiKeyAuth } from 'keygate/express';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { failingStore } from '../support/fixtures.js';

// Everything keygate hands back or prints, across every outcome, must be free of raw keys.
describe('no raw key appears in any result, error, response or log line', () => {
  const output: string[] = [];
  const capture = (...args: unknown[]) => {
    output.push(args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(' '));
  };
  beforeAll(() => {
    for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const)
      vi.spyOn(console, method).mockImplementation(capture);
  });
  afterAll(() => vi.restoreAllMocks());

  it('holds for results, thrown errors and HTTP responses of every kind', async () => {
    const store = new MemoryKeyStore();
    const cached = new CachedKeyStore(store);
    const keys = new KeyManager({ store: cached });
    const secrets: string[] = [];
    const seen: unknown[] = [];
    const a = await keys.create({
      accountId: 'acct',
      name: 'a',
      mode: 'live',
      permissions: ['p'],
      allowedIps: ['203.0.113.0/24'],
    });
    const b = await keys.create({ accountId: 'acct', name: 'b', mode: 'test' });
    const c = await keys.rotate(b.key.id);
    secrets.push(a.secret, b.secret, c.secret);
    seen.push(a.key, b.key, c.key, await keys.list('acct'));
    await keys.revoke(b.key.id);

    const requests = [
      ...secrets.map((secret) => ({ headers: { 'x-api-key': secret }, ip: '203.0.113.1' })),
      ...secrets.map((secret) => ({ headers: { 'x-api-key': secret }, ip: '198.51.100.1' })),
      ...secrets.map((secret) => ({ headers: { 'x-api-key': `${secret}, ${secret}` } })),
      ...secrets.map((secret) => ({ headers: { 'x-api-key': secret.slice(0, -1) } })),
    ];
    for (const request of requests) {
      seen.push(await authenticate(request, cached, { permissions: ['p'] }));
      seen.push(await authenticate(request, failingStore));
    }
    for (const call of [
      () => keys.revoke(b.key.id),
      () => keys.update(b.key.id, { name: 'x' }),
      () => keys.update(a.key.id, { allowedIps: [a.secret] }),
      () => keys.create({ accountId: 'acct', name: a.secret, mode: 'prod' as never }),
      () => keys.create({ accountId: 'acct', name: 'n', mode: 'test', permissions: [a.secret, 'bad perm'] }),
    ]) {
      const error = await call().then(
        () => undefined,
        (err: unknown) => err,
      );
      seen.push(error instanceof Error ? { ...error, message: error.message, stack: error.stack } : error);
    }

    const app = express();
    app.get('/', apiKeyAuth({ store: cached, permissions: ['p'] }), (req, res) => {
      res.json(req.apiKey);
    });
    app.get('/down', apiKeyAuth({ store: failingStore }), (_req, res) => {
      res.end();
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const secret of secrets) {
      for (const path of ['/', '/down']) {
        const res = await fetch(base + path, { headers: { 'x-api-key': secret } });
        seen.push(res.status, [...res.headers], await res.text());
      }
    }
    server.close();

    const everything = JSON.stringify(seen) + output.join('\n');
    expect(seen.length).toBeGreaterThan(50);
    for (const secret of secrets) {
      // Neither the key nor its random part, which is what an attacker would need.
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(8, 40));
    }
  });
});
