// The Elysia example through `app.handle()` on Node; test/frameworks/elysia.test.ts serves Elysia on Bun.
import { describe, expect, it } from 'vitest';
import { build } from '../../../examples/elysia/server.js';

const { app, demo } = await build();

describe('examples/elysia/server.js', () => {
  it.each([
    ['the demo key verifies an address', 'POST', '/v1/email/verify', true, 200],
    ['no key is refused', 'POST', '/v1/email/verify', false, 401],
    ['the health route answers without a key', 'GET', '/health', false, 200],
  ] as const)('%s', async (_, method, path, withKey, status) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (withKey) headers['x-api-key'] = demo.secret;
    const body = method === 'POST' ? JSON.stringify({ email: 'ada@example.com' }) : undefined;
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    expect(res.status).toBe(status);
    if (path === '/v1/email/verify' && status === 200) {
      expect(await res.json()).toEqual({ email: 'ada@example.com', result: 'valid_syntax', mode: 'test' });
    }
  });
});
