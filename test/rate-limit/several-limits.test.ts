// Several limits at once: a key's named limits (a burst and a monthly quota), limits shared by every
// key of an account, the most restrictive deciding, reported in the IETF multi-policy header fields.
import {
  type AuthRequest,
  type AuthResult,
  authenticate,
  CachedKeyStore,
  InvalidInputError,
  KeyManager,
  type KeyRateLimit,
  LeasableMemoryRateLimiter,
  LeasedRateLimiter,
  MemoryKeyStore,
  MemoryRateLimiter,
  type PublicKey,
  type RateLimitDecision,
  type RateLimiter,
  RateLimiterUnavailableError,
} from 'keygate';
import { rateLimitHeaderFields, resolveAuthOptions } from 'keygate/adapter-kit';
import { RedisRateLimiter } from 'keygate/redis';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const DAY_MS = 86_400_000;
const burstAndMonth: KeyRateLimit = [
  { name: 'monthly', limit: 5, windowMs: 30 * DAY_MS },
  { name: 'burst', limit: 2, windowMs: 1_000 },
];

async function seed(rateLimit: KeyRateLimit | null = burstAndMonth, accounts = ['acct_1']) {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const made: Array<Awaited<ReturnType<KeyManager['create']>>> = [];
  for (const accountId of accounts) {
    for (const mode of ['live', 'live', 'test'] as const) {
      made.push(await keys.create({ accountId, mode, name: `${mode} key`, rateLimit }));
    }
  }
  const cached = new CachedKeyStore(store);
  const req = (i: number): AuthRequest => ({ headers: { 'x-api-key': made[i]?.secret }, ip: '203.0.113.7' });
  return { store, cached, keys, made, req };
}

/** A clock the test moves. */
function clock(start = 1_764_000_000_000) {
  const c = { now: start, read: () => c.now };
  return c;
}

const codes = (results: AuthResult[]) => results.map((r) => (r.ok ? 200 : r.code));

describe('a key held to several named limits', () => {
  it('is refused when any one is spent, and the one that refused is reported with Retry-After its reset', async () => {
    const time = clock();
    const { cached, req } = await seed();
    const limiter = new MemoryRateLimiter({ clock: time.read });
    const run = () => authenticate(req(0), cached, { rateLimit: { limiter } });
    expect(codes([await run(), await run(), await run()])).toEqual([200, 200, 'rate_limited']);
    const refused = await run();
    expect(refused.rateLimit).toMatchObject({ name: 'burst', limit: 2, remaining: 0, windowMs: 1_000 });
    expect(refused.rateLimit?.resetMs).toBeLessThanOrEqual(1_000);
    time.now += 1_000;
    expect(codes([await run(), await run()])).toEqual([200, 200]);
    time.now += 1_000;
    // The month allowed 5: two, two, then one left.
    expect(codes([await run(), await run()])).toEqual([200, 'rate_limited']);
    time.now += 1_000;
    const monthly = await run();
    expect(monthly.rateLimit).toMatchObject({ name: 'monthly', remaining: 0, limit: 5 });
    expect(monthly.rateLimit?.resetMs).toBeGreaterThan(29 * DAY_MS);
  });

  it('counts a request refused by the shortest window against none of the longer ones', async () => {
    const time = clock();
    const { cached, req } = await seed();
    const limiter = new MemoryRateLimiter({ clock: time.read });
    const run = () => authenticate(req(0), cached, { rateLimit: { limiter } });
    await run();
    await run();
    for (let i = 0; i < 50; i++) expect((await run()).ok).toBe(false);
    time.now += 1_000;
    const next = await run();
    expect(next.rateLimit?.policies?.find((p) => p.name === 'monthly')).toMatchObject({ remaining: 2 });
  });

  it('reports every limit it counted, shortest window first, the one with fewest units left on top', async () => {
    const { cached, req } = await seed();
    const result = await authenticate(req(0), cached, { rateLimit: { limiter: new MemoryRateLimiter() } });
    expect(result.ok).toBe(true);
    expect(result.rateLimit?.policies?.map((p) => [p.name, p.scope, p.remaining])).toEqual([
      ['burst', 'key', 1],
      ['monthly', 'key', 4],
    ]);
    expect(result.rateLimit).toMatchObject({ name: 'burst', remaining: 1, limit: 2, windowMs: 1_000 });
    expect(rateLimitHeaderFields(result.rateLimit as NonNullable<AuthResult['rateLimit']>)).toEqual({
      'ratelimit-policy': '"burst";q=2;w=1, "monthly";q=5;w=2592000',
      ratelimit: `"burst";r=1;t=1, "monthly";r=4;t=2592000`,
    });
  });

  it('keeps one unnamed limit reported as "default", with no policies list', async () => {
    const { cached, req } = await seed({ limit: 3, windowMs: 60_000 });
    const result = await authenticate(req(0), cached, { rateLimit: { limiter: new MemoryRateLimiter() } });
    expect(result.rateLimit).toEqual({ limit: 3, remaining: 2, resetMs: 60_000, windowMs: 60_000 });
    expect(rateLimitHeaderFields(result.rateLimit as NonNullable<AuthResult['rateLimit']>)).toEqual({
      'ratelimit-policy': '"default";q=3;w=60',
      ratelimit: '"default";r=2;t=60',
    });
  });

  it('applies a default made of named limits to keys without their own', async () => {
    const { cached, req } = await seed(null);
    const rateLimit = { limiter: new MemoryRateLimiter(), default: burstAndMonth };
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await authenticate(req(0), cached, { rateLimit }));
    expect(codes(results)).toEqual([200, 200, 'rate_limited']);
  });

  it('asks a shared limiter one subject per limit: the key id plus the name', async () => {
    const { cached, req, made } = await seed();
    const seen: string[] = [];
    const limiter: RateLimiter = {
      async consume(keyId, limit, cost): Promise<RateLimitDecision> {
        seen.push(`${keyId} ${JSON.stringify(limit)} ${cost}`);
        return { allowed: true, limit: limit.limit, remaining: limit.limit - cost, resetMs: limit.windowMs };
      },
    };
    await authenticate(req(0), cached, { rateLimit: { limiter, cost: 2 } });
    const id = made[0]?.key.id;
    expect(seen).toEqual([
      `${id}:burst {"limit":2,"windowMs":1000} 2`,
      `${id}:monthly {"limit":5,"windowMs":2592000000} 2`,
    ]);
  });

  it('fails closed when a shared limiter fails partway, and never allows on garbage', async () => {
    const { cached, req } = await seed();
    let calls = 0;
    const failing: RateLimiter = {
      async consume(_keyId, limit) {
        calls++;
        if (calls === 2) throw new RateLimiterUnavailableError('down', new Error('ECONNRESET'));
        return { allowed: true, limit: limit.limit, remaining: 1, resetMs: 10 };
      },
    };
    const denied = await authenticate(req(0), cached, { rateLimit: { limiter: failing, onLimiterError: 'deny' } });
    expect(denied).toMatchObject({ ok: false, status: 503, code: 'rate_limiter_unavailable' });
    const garbage: RateLimiter = { consume: async () => ({ allowed: true }) as unknown as RateLimitDecision };
    const result = await authenticate(req(0), cached, { rateLimit: { limiter: garbage, onLimiterError: 'deny' } });
    expect(result).toMatchObject({ status: 503, code: 'rate_limiter_unavailable' });
  });
});

describe('limits shared by an account', () => {
  it('gives an account its plan once, however many keys it has', async () => {
    const { cached, req } = await seed(null);
    const rateLimit = { limiter: new MemoryRateLimiter(), account: { limit: 4, windowMs: 60_000 } };
    // Keys 0 and 1 are the account's live keys: they share 4.
    const results = [];
    for (const i of [0, 1, 0, 1, 0, 1]) results.push(await authenticate(req(i), cached, { rateLimit }));
    expect(codes(results)).toEqual([200, 200, 200, 200, 'rate_limited', 'rate_limited']);
    expect(results[4]?.rateLimit).toMatchObject({ name: 'account', remaining: 0, limit: 4 });
  });

  it('counts test keys apart from live keys, and one account apart from another', async () => {
    const { cached, req } = await seed(null, ['acct_1', 'acct_2']);
    const rateLimit = { limiter: new MemoryRateLimiter(), account: { limit: 1, windowMs: 60_000 } };
    // 0, 1 live and 2 test of acct_1; 3, 4 live and 5 test of acct_2.
    const results = [];
    for (const i of [0, 1, 2, 3, 5, 4]) results.push(await authenticate(req(i), cached, { rateLimit }));
    expect(codes(results)).toEqual([200, 'rate_limited', 200, 200, 200, 'rate_limited']);
  });

  it('applies the account limits beside the key own, the most restrictive deciding', async () => {
    const { cached, req } = await seed([{ name: 'burst', limit: 10, windowMs: 1_000 }]);
    const rateLimit = { limiter: new MemoryRateLimiter(), account: [{ name: 'daily', limit: 2, windowMs: DAY_MS }] };
    const results = [];
    for (const i of [0, 1, 0]) results.push(await authenticate(req(i), cached, { rateLimit }));
    expect(codes(results)).toEqual([200, 200, 'rate_limited']);
    expect(results[1]?.rateLimit?.policies?.map((p) => [p.name, p.scope, p.remaining])).toEqual([
      ['burst', 'key', 9],
      ['daily', 'account', 0],
    ]);
    expect(results[1]?.rateLimit).toMatchObject({ name: 'daily', remaining: 0 });
    expect(
      rateLimitHeaderFields(results[2]?.rateLimit as NonNullable<AuthResult['rateLimit']>)['ratelimit-policy'],
    ).toBe('"burst";q=10;w=1, "daily";q=2;w=86400');
  });

  it('looks each account plan up with a function of the key, checked once per object it returns', async () => {
    const { cached, req, keys, made } = await seed(null, ['acct_free', 'acct_pro']);
    await keys.update(made[3]?.key.id as string, { metadata: { plan: 'pro' } });
    const plans: Record<string, KeyRateLimit | null> = { free: { limit: 1, windowMs: 60_000 }, pro: null };
    const looked: string[] = [];
    const account = (key: PublicKey) => {
      looked.push(key.accountId);
      const plan = (key.metadata.plan as string | undefined) ?? 'free';
      return plan in plans ? plans[plan] : plans.free;
    };
    const rateLimit = { limiter: new MemoryRateLimiter(), account };
    const results = [];
    for (const i of [0, 0, 3, 3, 3]) results.push(await authenticate(req(i), cached, { rateLimit }));
    // acct_pro's key 3 has plan pro (null: no account limit), but its metadata changed after caching:
    // the store cache was told, so it reads the new metadata.
    expect(codes(results.slice(0, 2))).toEqual([200, 'rate_limited']);
    expect(looked.slice(0, 2)).toEqual(['acct_free', 'acct_free']);
    expect(results.slice(2).every((r) => r.ok && r.rateLimit === undefined)).toBe(true);
  });

  it('checks what the plan lookup returns once per object, not once per request', async () => {
    const { cached, req } = await seed(null);
    let reads = 0;
    const plan = {
      get limit() {
        reads++;
        return 2;
      },
      windowMs: 60_000,
    };
    const rateLimit = { limiter: new MemoryRateLimiter(), account: () => plan };
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await authenticate(req(0), cached, { rateLimit }));
    expect(codes(results)).toEqual([200, 200, 'rate_limited', 'rate_limited']);
    const afterFirstCheck = reads;
    expect(afterFirstCheck).toBeGreaterThan(0);
    await authenticate(req(1), cached, { rateLimit });
    expect(reads).toBe(afterFirstCheck);
  });

  it('fails closed when the plan lookup throws or answers something that is not a limit', async () => {
    const { cached, req } = await seed(null);
    const limiter = new MemoryRateLimiter();
    const throwing = await authenticate(req(0), cached, {
      rateLimit: {
        limiter,
        account: () => {
          throw new Error('plans unreachable');
        },
      },
    });
    expect(throwing).toMatchObject({ status: 503, code: 'rate_limiter_unavailable' });
    const bad = await authenticate(req(0), cached, {
      rateLimit: { limiter, account: () => ({ limit: 0, windowMs: 1 }) },
    });
    expect(bad).toMatchObject({ status: 503, code: 'rate_limiter_unavailable' });
  });
});

describe('several limits through leased budgets', () => {
  it('holds an account limit and a key burst exactly across three leasing instances', async () => {
    const { cached, req } = await seed([{ name: 'burst', limit: 40, windowMs: 60_000 }]);
    const shared = new LeasableMemoryRateLimiter();
    const instances = [1, 2, 3].map(() => new LeasedRateLimiter({ limiter: shared, maxSlice: 8 }));
    const account = { limit: 30, windowMs: 60_000 };
    const all = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        authenticate(req(i % 2), cached, { rateLimit: { limiter: instances[i % 3] as RateLimiter, account } }),
      ),
    );
    // Keys 0 and 1 share the account's 30; each key's own burst (40) never decides.
    const allowed = all.filter((r) => r.ok).length;
    expect(allowed).toBeLessThanOrEqual(30);
    // The early-refusal bound: 3 instances, slices of at most 8 beyond the need, on each of the
    // request's limits: fewer than 1 + 2 × 7 units unspent when a request is refused.
    expect(allowed).toBeGreaterThanOrEqual(30 - 2 * 7);
    await Promise.all(instances.map((l) => l.close()));
    const after = await shared.consume('account:live:acct_1:account', account, 0);
    expect(after.remaining).toBe(30 - allowed);
  });
});

describe('checking several limits where they are written', () => {
  it('refuses bad named limits naming the entry and member, and writes nothing', async () => {
    const store = new MemoryKeyStore();
    const keys = new KeyManager({ store });
    const base = { accountId: 'acct_1', mode: 'test' as const, name: 'k' };
    const cases: Array<[unknown, string]> = [
      [[], 'rateLimit'],
      [Array.from({ length: 11 }, (_, i) => ({ name: `l${i}`, limit: 1, windowMs: 1000 })), 'rateLimit'],
      [[{ limit: 1, windowMs: 1000 }], 'rateLimit[0].name'],
      [[{ name: 'has space', limit: 1, windowMs: 1000 }], 'rateLimit[0].name'],
      [[{ name: 'a"b', limit: 1, windowMs: 1000 }], 'rateLimit[0].name'],
      [
        [
          { name: 'a', limit: 1, windowMs: 1000 },
          { name: 'a', limit: 2, windowMs: 2000 },
        ],
        'rateLimit[1].name',
      ],
      [[{ name: 'a', limit: 0, windowMs: 1000 }], 'rateLimit[0].limit'],
      [[{ name: 'a', limit: 1, windowMs: -1 }], 'rateLimit[0].windowMs'],
      [[{ name: 'a', limit: 1, windowMs: 1000, window: 1 }], 'rateLimit[0].window'],
      [['burst'], 'rateLimit[0]'],
    ];
    for (const [rateLimit, field] of cases) {
      const err = await keys.create({ ...base, rateLimit: rateLimit as KeyRateLimit }).catch((e: unknown) => e);
      expect(err, field).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).field, JSON.stringify(rateLimit)).toBe(field);
    }
    expect(await keys.list('acct_1')).toHaveLength(0);
  });

  it('stores exactly the named fields, and replaces the whole list on update', async () => {
    const store = new MemoryKeyStore();
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'acct_1', mode: 'test', name: 'k', rateLimit: burstAndMonth });
    expect(key.rateLimit).toEqual(burstAndMonth);
    const updated = await keys.update(key.id, { rateLimit: [{ name: 'hourly', limit: 50, windowMs: 3_600_000 }] });
    expect(updated.rateLimit).toEqual([{ name: 'hourly', limit: 50, windowMs: 3_600_000 }]);
    expect(Object.isFrozen((updated.rateLimit as readonly object[])[0])).toBe(true);
  });

  it('refuses bad rateLimit.default and rateLimit.account options naming the member', () => {
    const limiter = new MemoryRateLimiter();
    const refusal = (rateLimit: unknown) => {
      try {
        resolveAuthOptions({ rateLimit } as never);
      } catch (err) {
        return (err as InvalidInputError).field;
      }
      return undefined;
    };
    expect(refusal({ limiter, default: [{ name: 'x', limit: 1 }] })).toBe('rateLimit.default[0].windowMs');
    expect(refusal({ limiter, account: [] })).toBe('rateLimit.account');
    expect(refusal({ limiter, account: 'pro' })).toBe('rateLimit.account');
    expect(refusal({ limiter, account: (key: PublicKey) => key && null })).toBeUndefined();
  });
});

const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
describe.skipIf(!redis)('several limits on Redis', () => {
  const prefix = `keygate:test:${RUN_ID}:several:`;
  afterAll(async () => {
    const client = await createClient({ url: REDIS_URL }).connect();
    for await (const found of client.scanIterator({ MATCH: `${prefix}*` })) if (found.length) await client.del(found);
    client.destroy();
  });

  it('shares an account budget exactly across limiters of separate clients, concurrency included', async () => {
    const { cached, req } = await seed(null);
    const clients = await Promise.all([1, 2, 3].map(() => createClient({ url: REDIS_URL }).connect()));
    try {
      const limiters = clients.map((client) => new RedisRateLimiter({ client, prefix }));
      const account = [
        { name: 'burst', limit: 1_000, windowMs: 60_000 },
        { name: 'daily', limit: 25, windowMs: DAY_MS },
      ];
      const all = await Promise.all(
        Array.from({ length: 90 }, (_, i) =>
          authenticate(req(i % 2), cached, { rateLimit: { limiter: limiters[i % 3] as RateLimiter, account } }),
        ),
      );
      expect(all.filter((r) => r.ok)).toHaveLength(25);
      expect(all.filter((r) => !r.ok && r.code === 'rate_limited')).toHaveLength(65);
    } finally {
      for (const client of clients) client.destroy();
    }
  });
});
