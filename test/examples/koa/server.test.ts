import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { build } from '../../../examples/koa/server.js';

const { app, demo } = await build();
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('examples/koa/server.js', () => {
  it.each([
    ['the demo key verifies an address', '/v1/email/verify?email=ada@example.com', true, 200],
    ['no key is refused', '/v1/email/verify?email=ada@example.com', false, 401],
    ['the health route answers without a key', '/health', false, 200],
    ['an unknown route is refused before the 404', '/nowhere', false, 401],
    ['an unknown route with the key is a 404', '/nowhere', true, 404],
  ] as const)('%s', async (_, path, withKey, status) => {
    const res = await fetch(`${base}${path}`, { headers: withKey ? { 'x-api-key': demo.secret } : {} });
    expect(res.status).toBe(status);
    if (path.startsWith('/v1/email/verify') && status === 200) {
      expect(await res.json()).toEqual({ email: 'ada@example.com', result: 'valid_syntax', mode: 'test' });
    }
  });
});
