// examples/hono-workers with its Durable Objects: 429 from the key's limiter object, 402 from the
// account's credit object.
import { readFileSync } from 'node:fs';
import { generateKey, hashKey } from 'keygate';
import { KV_PREFIX } from 'keygate/cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExample } from './support/example.js';

// A live key: a test key (mk_test_) never touches the ledger.
const secret = generateKey({ mode: 'live' });
let example: Awaited<ReturnType<typeof startExample>>;
beforeAll(async () => {
  example = await startExample({
    KEYGATE_DEMO_KEY: secret,
    KEYGATE_RATE_LIMIT_PER_MINUTE: '3',
    KEYGATE_DEMO_CREDITS: '2',
  });
});
afterAll(() => example?.stop());

const verify = (key: string) =>
  example.mf.dispatchFetch('http://example.test/v1/email/verify', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ email: 'ada@example.com' }),
  });

describe('examples/hono-workers with D1 and Durable Objects', () => {
  it('declares both objects in wrangler.toml, bound and migrated as SQLite-backed classes', () => {
    const toml = readFileSync(new URL('../../examples/hono-workers/wrangler.toml', import.meta.url), 'utf8');
    expect(toml).toMatch(/name = "KEYGATE_LIMITS"\nclass_name = "KeygateRateLimitObject"/);
    expect(toml).toMatch(/name = "KEYGATE_CREDITS"\nclass_name = "KeygateCreditObject"/);
    expect(toml).toMatch(/new_sqlite_classes = \["KeygateRateLimitObject", "KeygateCreditObject"\]/);
  });

  it('charges a credit a request, answers 402 once the credits are spent and 429 once the limit is', async () => {
    const answers: Array<{
      status: number;
      body: Record<string, unknown>;
      headers: { get(name: string): string | null };
    }> = [];
    for (let i = 0; i < 4; i++) {
      const res = await verify(secret);
      answers.push({ status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers });
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 402, 429]);
    expect(answers.map((a) => a.body.credits_left ?? a.body.code)).toEqual([
      1,
      0,
      'insufficient_credits',
      'rate_limited',
    ]);
    expect(answers[0]?.headers.get('ratelimit')).toMatch(/r=2/);
    expect(Number(answers[3]?.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('keeps the demo key in D1, as a digest, and caches its record in KV', async () => {
    const db = await example.mf.getD1Database('DB');
    const rows = await db
      .prepare('SELECT account_id, hash FROM keygate_keys')
      .all<{ account_id: string; hash: string }>();
    expect(rows.results).toEqual([{ account_id: 'acct_demo', hash: await hashKey(secret) }]);
    expect(JSON.stringify(rows.results)).not.toContain(secret);
    const kv = (await example.mf.getKVNamespace('KEYS')) as unknown as {
      list(options: { prefix: string }): Promise<{ keys: Array<{ name: string }> }>;
    };
    const cached = (await kv.list({ prefix: KV_PREFIX })).keys.map((entry) => entry.name);
    expect(cached).toEqual([`${KV_PREFIX}${await hashKey(secret)}`]);
  });

  it('answers 401 to another key, without counting it against the demo key', async () => {
    const res = await verify(generateKey({ mode: 'live' }));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('invalid_api_key');
  });
});
