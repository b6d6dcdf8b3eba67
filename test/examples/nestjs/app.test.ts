import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { build } from '../../../examples/nestjs/app.js';

let app: INestApplication | undefined;
afterEach(() => app?.close());

describe('examples/nestjs/app.ts', () => {
  it.each([
    ['the demo key verifies an address', 'POST', '/v1/email/verify', true, 200],
    ['no key is refused', 'POST', '/v1/email/verify', false, 401],
    ['the public health route answers without a key', 'GET', '/health', false, 200],
  ] as const)('%s', async (_, method, path, withKey, status) => {
    const built = await build();
    app = built.app;
    await app.listen(0, '127.0.0.1');
    const res = await fetch(`${await app.getUrl()}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(withKey ? { 'x-api-key': built.demo.secret } : {}) },
      ...(method === 'POST' ? { body: JSON.stringify({ email: 'ada@example.com' }) } : {}),
    });
    expect(res.status).toBe(status);
    if (path === '/v1/email/verify' && status === 200) {
      expect(await res.json()).toEqual({ email: 'ada@example.com', result: 'valid_syntax', mode: 'test' });
    }
  });
});
