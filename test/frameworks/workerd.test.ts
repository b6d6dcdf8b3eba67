// keygate/fetch and keygate/hono on real workerd (miniflare), bundled as a Workers build would be.
import { readFileSync } from 'node:fs';
import { generateKey } from 'keygate';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExample } from '../cloudflare/support/example.js';
import { itAnswersEveryCase, observe, type SendCase } from './cases.js';
import { seedCaseStore } from './fixtures.js';
import { bundleWorker, startWorker } from './workerd.js';

const fixture = await seedCaseStore();
let mf: Miniflare;
beforeAll(async () => {
  const script = await bundleWorker(new URL('./worker/entry.ts', import.meta.url));
  mf = startWorker(script, { RECORDS: JSON.stringify(fixture.records) });
});
afterAll(() => mf?.dispose());

const get = async (path: string, headers: Record<string, string>) =>
  observe((await mf.dispatchFetch(`http://api.test${path}`, { headers })) as unknown as Response);
const under =
  (prefix: string): SendCase =>
  ({ path, headers }) =>
    get(prefix + path, headers);

describe.each([
  ['keygate/fetch on workerd', '/fetch'],
  ['keygate/hono on workerd', '/hono'],
])('%s', (_, prefix) => {
  itAnswersEveryCase(
    () => fixture,
    () => under(prefix),
  );

  it('without clientIp, X-Forwarded-For is ignored: an allow-listed key gets 403', async () => {
    const res = await get(`${prefix}/no-client-ip`, {
      'x-api-key': fixture.secrets.allowListed,
      'x-forwarded-for': '203.0.113.7',
      'cf-connecting-ip': '203.0.113.7',
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).code).toBe('ip_not_allowed');
  });

  it.each([
    ['203.0.113.7', 200],
    ['198.51.100.7', 403],
  ])('the Cloudflare resolver reads CF-Connecting-IP (%s -> %i), not X-Forwarded-For', async (ip, status) => {
    const other = ip === '203.0.113.7' ? '198.51.100.7' : '203.0.113.7';
    const res = await get(`${prefix}/cloudflare`, {
      'x-api-key': fixture.secrets.allowListed,
      'cf-connecting-ip': ip,
      'x-forwarded-for': other,
    });
    expect(res.status).toBe(status);
  });
});

describe('examples/hono-workers', () => {
  const secret = generateKey({ mode: 'test' });
  let example: Awaited<ReturnType<typeof startExample>>;
  // With its wrangler.toml's Durable Objects and vars; a test key never touches the credit ledger.
  beforeAll(async () => {
    example = await startExample({
      KEYGATE_DEMO_KEY: secret,
      KEYGATE_RATE_LIMIT_PER_MINUTE: '60',
      KEYGATE_DEMO_CREDITS: '1000',
    });
  });
  afterAll(() => example?.stop());

  it('is a package of its own (wrangler pinned, hono, keygate from this repository); git ignores .dev.vars and .wrangler/', () => {
    const manifest = JSON.parse(
      readFileSync(new URL('../../examples/hono-workers/package.json', import.meta.url), 'utf8'),
    );
    expect(manifest.dependencies).toMatchObject({ hono: expect.any(String), keygate: 'file:../..' });
    expect(manifest.devDependencies.wrangler).toMatch(/^\d+\.\d+\.\d+$/); // pinned
    const ignored = readFileSync(new URL('../../.gitignore', import.meta.url), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['.dev.vars', '.wrangler/']));
  });

  it.each([
    ['the demo key', secret, 200],
    ['another key', generateKey({ mode: 'test' }), 401],
    ['no key', undefined, 401],
  ])('verifies an address with %s -> %i', async (_, key, status) => {
    const res = await example.mf.dispatchFetch('http://example.test/v1/email/verify', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
      body: JSON.stringify({ email: 'ada@example.com' }),
    });
    expect(res.status).toBe(status);
    const body = (await res.json()) as Record<string, unknown>;
    if (status === 200) expect(body).toMatchObject({ valid_syntax: true, mode: 'test', account: 'acct_demo' });
    else expect(body.code).toBe(key ? 'invalid_api_key' : 'missing_api_key');
  });
});
