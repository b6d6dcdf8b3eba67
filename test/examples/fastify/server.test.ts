import { describe, expect, it } from 'vitest';
import { build } from '../../../examples/fastify/server.js';

describe('examples/fastify/server.js', () => {
  it.each([
    ['the demo key verifies an address', 'POST', '/v1/email/verify', true, 200],
    ['no key is refused', 'POST', '/v1/email/verify', false, 401],
    ['a route that opts out answers without a key', 'GET', '/v1/status', false, 200],
    ['an unknown route is refused before the 404', 'GET', '/nowhere', false, 401],
  ] as const)('%s', async (_, method, url, withKey, status) => {
    const { app, demo } = await build();
    const res = await app.inject({
      method,
      url,
      headers: withKey ? { 'x-api-key': demo.secret } : {},
      ...(method === 'POST' ? { payload: { email: 'ada@example.com' } } : {}),
    });
    expect(res.statusCode).toBe(status);
    if (url === '/v1/email/verify' && status === 200) {
      expect(res.json()).toEqual({ email: 'ada@example.com', result: 'valid_syntax', mode: 'test' });
    }
    await app.close();
  });
});
