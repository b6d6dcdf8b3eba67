import { readFile } from 'node:fs/promises';
import { UsageRecorder } from 'keygate';
import { afterEach, describe, expect, it } from 'vitest';
import { RATE_LIMITS } from '../../../examples/email-verification/server.js';
import { ACCOUNT, type Service, startMain, startService } from './service.js';

// The example's per-key rate limits: each request costs one unit, a batch its number of addresses;
// the demo keys carry limits (test lower than live), and the README states them.
const emails = (n: number) => Array.from({ length: n }, (_, i) => `user${i}@example.com`);
const fields = (res: { headers: Headers }) => [res.headers.get('ratelimit-policy'), res.headers.get('ratelimit')];

describe('rate limits in the e-mail service', () => {
  let svc: Service | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  async function limitedKey(s: Service, limit: number) {
    const made = await s.keys.create({
      accountId: ACCOUNT,
      name: 'limited',
      mode: 'test',
      permissions: ['email:verify', 'email:score'],
      rateLimit: { limit, windowMs: 60_000 },
    });
    return made.secret;
  }

  it('charges a batch its size and a single request one unit, with the fields on every answer', async () => {
    svc = await startService('memory');
    const key = await limitedKey(svc, 5);
    const batch = await svc.post('/v1/email/verify/batch', key, { emails: emails(3) });
    expect(batch.status).toBe(200);
    expect(fields(batch)).toEqual(['"default";q=5;w=60', '"default";r=2;t=60']);
    const single = await svc.post('/v1/email/score', key, { email: 'ada@example.com' });
    expect(fields(single)).toEqual(['"default";q=5;w=60', '"default";r=1;t=60']);
  });

  it('refuses a batch larger than what remains with 429 problem+json and Retry-After, and counts nothing for it', async () => {
    svc = await startService('memory');
    const key = await limitedKey(svc, 5);
    await svc.post('/v1/email/verify/batch', key, { emails: emails(3) });
    const refused = await svc.post('/v1/email/verify/batch', key, { emails: emails(3) });
    expect(refused.status).toBe(429);
    expect(refused.type).toBe('application/problem+json');
    expect(refused.json).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(fields(refused)).toEqual(['"default";q=5;w=60', '"default";r=2;t=60']);
    const fits = await svc.post('/v1/email/verify/batch', key, { emails: emails(2) });
    expect(fields(fits)[1]).toBe('"default";r=0;t=60');
  });

  it('authenticates a batch before reading its body: no key is 401 even for a body that is not JSON', async () => {
    svc = await startService('memory');
    const res = await svc.call('POST', '/v1/email/verify/batch', undefined, undefined, '{"emails": [');
    expect(res.status).toBe(401);
    expect(res.json.code).toBe('missing_api_key');
  });

  it('gives keys without a limit of their own the default, when the service sets one', async () => {
    svc = await startService('memory', 1000, () => ({ defaultRateLimit: { limit: 7, windowMs: 60_000 } }));
    const res = await svc.post('/v1/email/verify', svc.secrets.test, { email: 'ada@example.com' });
    expect(fields(res)).toEqual(['"default";q=7;w=60', '"default";r=6;t=60']);
  });

  it('counts rate_limited as a denial in the key’s usage', async () => {
    let recorder: UsageRecorder | undefined;
    svc = await startService('memory', 1000, ({ store }) => {
      recorder = new UsageRecorder({ store, intervalMs: 0 });
      return { usage: recorder };
    });
    const key = await limitedKey(svc, 2);
    for (let i = 0; i < 3; i++) await svc.post('/v1/email/verify', key, { email: 'ada@example.com' });
    expect((await svc.call('GET', '/v1/account', key)).status).toBe(429);
    await recorder?.flush();
    const id = (await svc.keys.list(ACCOUNT)).find((k) => k.name === 'limited')?.id as string;
    expect(await svc.keys.usage(id)).toMatchObject({ allowed: 2, denied: 2, deniedBy: { rate_limited: 2 } });
  });
});

describe('the demo keys of npm start', () => {
  it('carry their limits, test lower than live, and the README states them', async () => {
    expect(RATE_LIMITS.test.limit).toBeLessThan(RATE_LIMITS.live.limit);
    const started = await startMain(['--memory']);
    try {
      const [test, live] = started.secrets;
      for (const [secret, limit] of [
        [test, RATE_LIMITS.test],
        [live, RATE_LIMITS.live],
      ] as const) {
        const res = await fetch(`${started.url}/v1/account`, { headers: { 'x-api-key': secret as string } });
        const body = (await res.json()) as { key: { rateLimit: unknown } };
        expect(body.key.rateLimit).toEqual(limit);
        expect(res.headers.get('ratelimit-policy')).toBe(`"default";q=${limit.limit};w=${limit.windowMs / 1000}`);
      }
    } finally {
      await started.close();
    }
    const readme = await readFile(new URL('../../../examples/email-verification/README.md', import.meta.url), 'utf8');
    for (const [kind, limit] of Object.entries(RATE_LIMITS)) {
      expect(readme, kind).toMatch(new RegExp(`\\| ${kind}[^|]*\\| ${limit.limit.toLocaleString('en-US')} per minute`));
    }
  });
});
