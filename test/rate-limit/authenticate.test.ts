// Check row 9 through `authenticate`: the `rateLimit` option with each kind of limiter, the row order,
// per-key limits against the default, costs, window resets, the fallback and deny modes, and timeouts.
import {
  type AuthenticateOptions,
  type AuthRequest,
  type AuthResult,
  type AuthSuccess,
  authenticate,
  authenticateEager,
  CachedKeyStore,
  type KeygateEvent,
  KeyManager,
  MemoryKeyStore,
  MemoryRateLimiter,
  type RateLimitDecision,
  type RateLimiter,
  RateLimiterUnavailableError,
  UsageRecorder,
} from 'keygate';
import { RedisRateLimiter } from 'keygate/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settlesAt } from './support/deadline.js';

const INSIDE = '203.0.113.7';
const perMinute = { limit: 3, windowMs: 60_000 };

async function seed() {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const base = { accountId: 'acct_1', mode: 'live' as const, permissions: ['email:verify'] };
  const made = {
    own: await keys.create({ ...base, name: 'own limit', rateLimit: { limit: 2, windowMs: 10_000 } }),
    plain: await keys.create({ ...base, name: 'no limit of its own' }),
    listed: await keys.create({ ...base, name: 'allow-listed', allowedIps: ['203.0.113.0/24'], rateLimit: perMinute }),
    reader: await keys.create({ ...base, name: 'read only', permissions: ['email:read'], rateLimit: perMinute }),
  };
  const cached = new CachedKeyStore(store);
  const req = (name: keyof typeof made, ip: string | null = INSIDE): AuthRequest => ({
    headers: { 'x-api-key': made[name].secret },
    ip,
  });
  // Warm the cache, so that the synchronous path is the one measured.
  for (const name of Object.keys(made) as Array<keyof typeof made>) await authenticate(req(name), cached);
  return { store, cached, keys, made, req };
}

/** A limiter whose calls are counted, answering or failing as the test says. */
class Scripted implements RateLimiter {
  calls: Array<{ keyId: string; limit: number; windowMs: number; cost: number }> = [];
  mode: 'answer' | 'fail' | 'hang' = 'answer';
  async consume(keyId: string, limit: { limit: number; windowMs: number }, cost: number): Promise<RateLimitDecision> {
    this.calls.push({ keyId, ...limit, cost });
    if (this.mode === 'fail') throw new RateLimiterUnavailableError('down', new Error('ECONNREFUSED'));
    if (this.mode === 'hang') return new Promise<never>(() => {});
    return { allowed: true, limit: limit.limit, remaining: limit.limit - cost, resetMs: limit.windowMs };
  }
}

const codes = (results: AuthResult[]) => results.map((r) => (r.ok ? 200 : r.code));

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(() => void process.on('unhandledRejection', onUnhandled));
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('rateLimit option: row 9 of the check order', async () => {
  const s = await seed();

  it('consumes nothing for a request refused by rows 1 to 8 (401, 403): only a request that passed them counts', async () => {
    const limiter = new Scripted();
    const options: AuthenticateOptions = { permissions: ['email:verify'], rateLimit: { limiter } };
    const refused = [
      await authenticate({ headers: {}, ip: INSIDE }, s.cached, options),
      await authenticate({ headers: { 'x-api-key': 'mk_live_nope' }, ip: INSIDE }, s.cached, options),
      await authenticate(s.req('listed', '198.51.100.1'), s.cached, options),
      await authenticate(s.req('reader'), s.cached, options),
    ];
    expect(codes(refused)).toEqual([
      'missing_api_key',
      'malformed_api_key',
      'ip_not_allowed',
      'insufficient_permissions',
    ]);
    expect(refused.every((r) => r.rateLimit === undefined)).toBe(true);
    expect(limiter.calls).toEqual([]);
    expect(await authenticate(s.req('listed'), s.cached, options)).toMatchObject({ ok: true });
    expect(limiter.calls).toEqual([{ keyId: s.made.listed.key.id, ...perMinute, cost: 1 }]);
  });

  it('limits a key by its own rateLimit, which wins over the default, and returns 429 rate_limited past it', async () => {
    const options = { rateLimit: { limiter: new MemoryRateLimiter(), default: { limit: 100, windowMs: 60_000 } } };
    const results = [1, 2, 3].map(() => authenticateEager(s.req('own'), s.cached, options) as AuthResult);
    expect(codes(results)).toEqual([200, 200, 'rate_limited']);
    expect(results[0]).toMatchObject({ ok: true, rateLimit: { limit: 2, remaining: 1, windowMs: 10_000 } });
    expect(results[2]).toMatchObject({
      ok: false,
      status: 429,
      code: 'rate_limited',
      key: { id: s.made.own.key.id },
      rateLimit: { limit: 2, remaining: 0, resetMs: expect.any(Number), windowMs: 10_000 },
    });
  });

  it('applies the default to a key without a limit of its own', async () => {
    const options = { rateLimit: { limiter: new MemoryRateLimiter(), default: { limit: 1, windowMs: 1000 } } };
    const results = [1, 2].map(() => authenticateEager(s.req('plain'), s.cached, options) as AuthResult);
    expect(codes(results)).toEqual([200, 'rate_limited']);
    expect(results[1]?.rateLimit).toMatchObject({ limit: 1, windowMs: 1000 });
  });

  it('does not limit a key with neither its own limit nor a default: the same result as without the option', async () => {
    const limiter = new Scripted();
    const limited = authenticateEager(s.req('plain'), s.cached, { rateLimit: { limiter } });
    const unlimited = authenticateEager(s.req('plain'), s.cached);
    // A cached key's result is built per request: equal, carrying the same key object.
    expect(limited).toEqual(unlimited);
    expect((limited as AuthSuccess).key).toBe((unlimited as AuthSuccess).key);
    expect(limiter.calls).toEqual([]);
  });

  it('stays synchronous with a MemoryRateLimiter on a cached key (no promise on the hot path)', () => {
    const r = authenticateEager(s.req('own'), s.cached, { rateLimit: { limiter: new MemoryRateLimiter() } });
    expect('then' in r).toBe(false);
    expect(r).toMatchObject({ ok: true, rateLimit: { remaining: 1 } });
  });

  // A batch route's request: its size travels beside the headers (an adapter passes its framework's request as `native`).
  const batch = (size: number): AuthRequest => ({ ...s.req('own'), size }) as AuthRequest;
  const sizeOf = (r: AuthRequest) => (r as AuthRequest & { size: number }).size;

  it.each([
    ['a number', 2, [2, 2]],
    ['a function of the request', sizeOf, [3, 5]],
  ])('takes the cost as %s', async (_, cost, expected) => {
    const limiter = new Scripted();
    const options = { rateLimit: { limiter, cost } };
    await authenticate(batch(3), s.cached, options);
    await authenticate(batch(5), s.cached, options);
    expect(limiter.calls.map((c) => c.cost)).toEqual(expected);
  });

  it('refuses a batch that costs more than what remains, counting nothing, and lets a smaller one through', () => {
    const options = { rateLimit: { limiter: new MemoryRateLimiter(), cost: sizeOf } };
    expect(authenticateEager(batch(3), s.cached, options)).toMatchObject({
      code: 'rate_limited',
      rateLimit: { remaining: 2 },
    });
    expect(authenticateEager(batch(2), s.cached, options)).toMatchObject({ ok: true, rateLimit: { remaining: 0 } });
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('no body');
      },
    ],
    ['returns a fraction', () => 1.5],
    ['returns a negative number', () => -1],
    ['returns NaN', () => Number.NaN],
  ])('fails closed with 503 rate_limiter_unavailable when the cost function %s', async (_, cost) => {
    const options = { rateLimit: { limiter: new MemoryRateLimiter(), cost } };
    expect(await authenticate(s.req('own'), s.cached, options)).toMatchObject({
      ok: false,
      status: 503,
      code: 'rate_limiter_unavailable',
      key: { id: s.made.own.key.id },
    });
  });

  it('opens a fresh window once the old one has ended (injected clock)', () => {
    let now = 1_000_000;
    const options = { rateLimit: { limiter: new MemoryRateLimiter({ clock: () => now }) } };
    const burst = () => [1, 2, 3].map(() => authenticateEager(s.req('own'), s.cached, options) as AuthResult);
    expect(codes(burst())).toEqual([200, 200, 'rate_limited']);
    now += 9_999;
    const late = authenticateEager(s.req('own'), s.cached, options);
    expect(late).toMatchObject({ code: 'rate_limited', rateLimit: { resetMs: 1 } });
    now += 1;
    expect(codes(burst())).toEqual([200, 200, 'rate_limited']);
  });

  it('counts per key: one key over its limit leaves another untouched', () => {
    const options = { rateLimit: { limiter: new MemoryRateLimiter(), default: { limit: 1, windowMs: 60_000 } } };
    expect(codes([1, 2].map(() => authenticateEager(s.req('plain'), s.cached, options) as AuthResult))).toEqual([
      200,
      'rate_limited',
    ]);
    expect(authenticateEager(s.req('own'), s.cached, options)).toMatchObject({ ok: true });
  });

  it('follows a change of the key’s limit made through the KeyManager on the next request', async () => {
    const { cached, keys, made, req } = await seed();
    const options = { rateLimit: { limiter: new MemoryRateLimiter() } };
    expect(codes([1, 2, 3].map(() => authenticateEager(req('own'), cached, options) as AuthResult))).toEqual([
      200,
      200,
      'rate_limited',
    ]);
    await keys.update(made.own.key.id, { rateLimit: { limit: 5, windowMs: 10_000 } });
    expect(await authenticate(req('own'), cached, options)).toMatchObject({ ok: true, rateLimit: { limit: 5 } });
    await keys.update(made.own.key.id, { rateLimit: null });
    expect((await authenticate(req('own'), cached, options)).rateLimit).toBeUndefined();
  });

  it('hands every result to onResult, and usage statistics count rate_limited as a denial reason', async () => {
    const { store, cached, made, req } = await seed();
    const usage = new UsageRecorder({ store, intervalMs: 0 });
    const options = { onResult: usage.record, rateLimit: { limiter: new MemoryRateLimiter() } };
    for (let i = 0; i < 5; i++) await authenticate(req('own'), cached, options);
    await usage.flush();
    const report = await new KeyManager({ store }).usage(made.own.key.id);
    expect(report).toMatchObject({ allowed: 2, denied: 3, deniedBy: { rate_limited: 3 } });
  });
});

describe('rateLimit option: a shared limiter that fails or hangs', async () => {
  const s = await seed();

  it('falls back to per-process limiting with the key’s own limit, with one ratelimit.degraded per episode', async () => {
    const limiter = new Scripted();
    limiter.mode = 'fail';
    const events: KeygateEvent[] = [];
    const options = { rateLimit: { limiter, onEvent: (e: KeygateEvent) => void events.push(e) } };
    const results: AuthResult[] = [];
    for (let i = 0; i < 4; i++) results.push(await authenticate(s.req('own'), s.cached, options));
    expect(codes(results)).toEqual([200, 200, 'rate_limited', 'rate_limited']);
    expect(results[2]?.rateLimit).toMatchObject({ limit: 2, remaining: 0, windowMs: 10_000 });
    expect(events).toEqual([
      expect.objectContaining({ type: 'ratelimit.degraded', limiter: 'Scripted', keyId: null, hint: null }),
    ]);
  });

  it('shares one fallback among routes that share a limiter: one event, one per-process count', async () => {
    const limiter = new Scripted();
    limiter.mode = 'fail';
    const events: KeygateEvent[] = [];
    const rateLimit = { limiter, onEvent: (e: KeygateEvent) => void events.push(e) };
    const verify = { permissions: ['email:verify'], rateLimit };
    const any = { rateLimit };
    const results = [
      await authenticate(s.req('own'), s.cached, verify),
      await authenticate(s.req('own'), s.cached, any),
      await authenticate(s.req('own'), s.cached, verify),
    ];
    expect(codes(results)).toEqual([200, 200, 'rate_limited']);
    expect(events).toHaveLength(1);
  });

  it("answers 503 rate_limiter_unavailable under onLimiterError: 'deny', and still reports the episode once", async () => {
    const limiter = new Scripted();
    limiter.mode = 'fail';
    const events: KeygateEvent[] = [];
    const options = {
      rateLimit: { limiter, onLimiterError: 'deny' as const, onEvent: (e: KeygateEvent) => void events.push(e) },
    };
    const results = [
      await authenticate(s.req('own'), s.cached, options),
      await authenticate(s.req('own'), s.cached, options),
    ];
    expect(results).toEqual([
      expect.objectContaining({
        ok: false,
        status: 503,
        code: 'rate_limiter_unavailable',
        key: expect.objectContaining({ id: s.made.own.key.id }),
      }),
      expect.objectContaining({ status: 503, code: 'rate_limiter_unavailable' }),
    ]);
    expect(events).toHaveLength(1);
  });

  it('never waits past the timeout for a limiter that hangs: falls back after `timeout`, no unhandled rejection', async () => {
    const limiter = new Scripted();
    limiter.mode = 'hang';
    const events: KeygateEvent[] = [];
    const options = { timeoutMs: 50, rateLimit: { limiter, onEvent: (e: KeygateEvent) => void events.push(e) } };
    // Fake timers: still waiting at 49 ms, answered by 51 ms, whatever the machine's speed.
    const outcome = await settlesAt(50, () => authenticate(s.req('own'), s.cached, options));
    expect(outcome).toMatchObject({ status: 'fulfilled', value: { ok: true, rateLimit: { limit: 2 } } });
    expect(events.map((e) => e.type)).toEqual(['ratelimit.degraded']);
  });

  it('never waits past its timeout for a RedisRateLimiter whose server does not answer (deny: 503)', async () => {
    const silent = { sendCommand: () => new Promise<never>(() => {}) };
    const limiter = new RedisRateLimiter({ client: silent as never, timeoutMs: 50 });
    const options = { rateLimit: { limiter, onLimiterError: 'deny' as const } };
    // Fake timers: still waiting at 49 ms, answered by 51 ms, whatever the machine's speed.
    const outcome = await settlesAt(50, () => authenticate(s.req('own'), s.cached, options));
    expect(outcome).toMatchObject({
      status: 'fulfilled',
      value: { status: 503, code: 'rate_limiter_unavailable' },
    });
  });

  it('fails closed on a decision it cannot read (a custom limiter answering garbage)', async () => {
    const garbage: RateLimiter = { consume: async () => ({ allowed: 'yes' }) as never };
    expect(await authenticate(s.req('own'), s.cached, { rateLimit: { limiter: garbage } })).toMatchObject({
      status: 503,
      code: 'rate_limiter_unavailable',
    });
  });
});

describe('rateLimit option: validation', () => {
  const limiter = new MemoryRateLimiter();
  it.each([
    ['a string', 'rateLimit', 'memory'],
    ['no limiter', 'rateLimit.limiter', {}],
    ['a limiter without consume', 'rateLimit.limiter', { limiter: {} }],
    ['a default of 0 units', 'rateLimit.default.limit', { limiter, default: { limit: 0, windowMs: 1000 } }],
    ['a default without a window', 'rateLimit.default.windowMs', { limiter, default: { limit: 10 } }],
    [
      'a misspelt default member',
      'rateLimit.default.window',
      { limiter, default: { limit: 1, windowMs: 1, window: 1 } },
    ],
    ['a negative cost', 'rateLimit.cost', { limiter, cost: -1 }],
    ['a fractional cost', 'rateLimit.cost', { limiter, cost: 0.5 }],
    ['a cost as text', 'rateLimit.cost', { limiter, cost: '1' }],
    ['an unknown onLimiterError', 'rateLimit.onLimiterError', { limiter, onLimiterError: 'allow' }],
    ['an onEvent that is not a function', 'rateLimit.onEvent', { limiter, onEvent: 'log' }],
    ['a misspelt option', 'rateLimit.defaultLimit', { limiter, defaultLimit: { limit: 1, windowMs: 1 } }],
  ])('refuses %s with invalid_input naming %s', async (_, field, rateLimit) => {
    const store = new MemoryKeyStore();
    await expect(authenticate({ headers: {} }, store, { rateLimit: rateLimit as never })).rejects.toMatchObject({
      code: 'invalid_input',
      field,
    });
  });

  it('takes null as no rate limits', async () => {
    expect(await authenticate({ headers: {} }, new MemoryKeyStore(), { rateLimit: null })).toMatchObject({
      code: 'missing_api_key',
    });
  });
});
