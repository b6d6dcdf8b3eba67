import { authenticate, FailedAttemptThrottle, generateKey, KeyManager, MemoryKeyStore } from 'keygate';
import { createDenialResponder } from 'keygate/adapter-kit';
import { RedisAttemptCounter } from 'keygate/redis';
import type { AttemptWindow, SharedAttemptCounter } from 'keygate/store-kit';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { HEADERS } from '../frameworks/cases.js';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { countingStore, hangingStore } from '../support/fixtures.js';
import { startApps } from './support/apps.js';

const store = new MemoryKeyStore();
const keys = new KeyManager({ store });
const good = await keys.create({ accountId: 'a', name: 'good', mode: 'live' });
const listed = await keys.create({ accountId: 'a', name: 'listed', mode: 'live', allowedIps: ['203.0.113.0/24'] });
const wrong = `${good.secret.slice(0, -1)}${good.secret.endsWith('a') ? 'b' : 'a'}`;

/** A clock the test moves by hand. */
function clock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function attempt(throttle: FailedAttemptThrottle, ip: string | undefined, key = wrong, on = store) {
  return authenticate({ headers: { 'x-api-key': key }, ip }, on, { throttle });
}

async function failTimes(throttle: FailedAttemptThrottle, ip: string, n: number) {
  for (let i = 0; i < n; i++) expect((await attempt(throttle, ip)).status).toBe(401);
}

/** An in-process stand-in for Redis, as the shared counter contract describes it. */
function memoryCounter(now: () => number): SharedAttemptCounter & { down: boolean } {
  const windows = new Map<string, { count: number; resetAt: number }>();
  const reserved = new Map<string, Set<number>>();
  let ids = 0;
  const open = (bucket: string) => {
    const w = windows.get(bucket);
    return w && w.resetAt > now() ? w : undefined;
  };
  const countFailure = (bucket: string, windowMs: number) => {
    let w = open(bucket);
    if (!w) {
      w = { count: 0, resetAt: now() + windowMs };
      windows.set(bucket, w);
    }
    w.count++;
    return { count: w.count, resetMs: w.resetAt - now() };
  };
  return {
    down: false,
    async increment(bucket, windowMs) {
      if (this.down) throw new Error('ECONNREFUSED');
      return countFailure(bucket, windowMs);
    },
    async get(bucket): Promise<AttemptWindow | null> {
      if (this.down) throw new Error('ECONNREFUSED');
      const w = open(bucket);
      return w ? { count: w.count, resetMs: w.resetAt - now() } : null;
    },
    async reserve(bucket, max, windowMs) {
      if (this.down) throw new Error('ECONNREFUSED');
      const w = open(bucket);
      const mine = reserved.get(bucket) ?? new Set<number>();
      reserved.set(bucket, mine);
      const count = w?.count ?? 0;
      const resetMs = w ? w.resetAt - now() : 1000;
      const granted = count + mine.size < max;
      const id = ++ids;
      if (granted) mine.add(id);
      return {
        granted,
        count,
        resetMs,
        settle: async (failed: boolean) => {
          mine.delete(id);
          if (failed) countFailure(bucket, windowMs);
        },
      };
    },
  };
}

describe('FailedAttemptThrottle through authenticate', () => {
  it('answers 429 too_many_failed_attempts with a Retry-After after max 401s, to a valid key too', async () => {
    const c = clock();
    const throttle = new FailedAttemptThrottle({ max: 3, windowMs: 60_000, clock: c.now });
    await failTimes(throttle, '198.51.100.7', 3);
    c.advance(15_000);
    expect(await attempt(throttle, '198.51.100.7')).toMatchObject({
      ok: false,
      status: 429,
      code: 'too_many_failed_attempts',
      retryAfterSeconds: 45,
    });
    // Checked before the key: a right guess from a throttled address learns nothing either.
    expect((await attempt(throttle, '198.51.100.7', good.secret)).status).toBe(429);
  });

  it('never locks out a valid key used from another address', async () => {
    const throttle = new FailedAttemptThrottle({ max: 2 });
    await failTimes(throttle, '198.51.100.7', 2);
    expect((await attempt(throttle, '198.51.100.7', good.secret)).status).toBe(429);
    for (const ip of ['198.51.100.8', '2001:db8::1', '::ffff:198.51.100.9', undefined]) {
      expect((await attempt(throttle, ip, good.secret)).status).toBe(200);
    }
  });

  it.each([
    ['IPv4-mapped spelling of the same IPv4', '198.51.100.7', '::ffff:198.51.100.7', 429],
    ['another address in the same IPv6 /64', '2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:fffe', 429],
    ['an upper-case spelling in the same /64', '2001:db8:1:2::1', '2001:DB8:1:2::9', 429],
    ['the next /64', '2001:db8:1:2::1', '2001:db8:1:3::1', 200],
    ['two different made-up address strings', 'unknown', 'not-an-ip', 429],
  ])('groups clients: %s', async (_, first, second, status) => {
    const throttle = new FailedAttemptThrottle({ max: 2 });
    await failTimes(throttle, first, 2);
    expect((await attempt(throttle, second, good.secret)).status).toBe(status);
  });

  it('counts only 401s: 403s, 503s and allows never add up', async () => {
    const throttle = new FailedAttemptThrottle({ max: 1 });
    for (let i = 0; i < 3; i++) {
      expect((await attempt(throttle, '198.51.100.7', listed.secret)).status).toBe(403);
      expect((await attempt(throttle, '198.51.100.7', good.secret)).status).toBe(200);
      const slow = await authenticate({ headers: { 'x-api-key': good.secret }, ip: '198.51.100.7' }, hangingStore, {
        throttle,
        timeoutMs: 5,
      });
      expect(slow.status).toBe(503);
    }
    expect((await attempt(throttle, '198.51.100.7', good.secret)).status).toBe(200);
  });

  it('counts every kind of 401: missing, malformed, invalid, revoked', async () => {
    const throttle = new FailedAttemptThrottle({ max: 4 });
    const revoked = await keys.create({ accountId: 'a', name: 'r', mode: 'live' });
    await keys.revoke(revoked.key.id);
    const codes = [];
    for (const headers of [{}, { 'x-api-key': 'nope' }, { 'x-api-key': wrong }, { 'x-api-key': revoked.secret }]) {
      const result = await authenticate({ headers, ip: '198.51.100.7' }, store, { throttle });
      codes.push(result.ok ? 'ok' : result.code);
    }
    expect(codes).toEqual(['missing_api_key', 'malformed_api_key', 'malformed_api_key', 'revoked_api_key']);
    expect((await attempt(throttle, '198.51.100.7', good.secret)).status).toBe(429);
  });

  it('lets a client try again once the window has closed', async () => {
    const c = clock();
    const throttle = new FailedAttemptThrottle({ max: 2, windowMs: 10_000, clock: c.now });
    await failTimes(throttle, '198.51.100.7', 2);
    expect((await attempt(throttle, '198.51.100.7')).status).toBe(429);
    c.advance(10_000);
    expect((await attempt(throttle, '198.51.100.7', good.secret)).status).toBe(200);
  });

  it('does not throttle requests without a client address (nothing to key on)', async () => {
    const throttle = new FailedAttemptThrottle({ max: 1 });
    for (let i = 0; i < 3; i++) expect((await attempt(throttle, undefined)).status).toBe(401);
    expect((await attempt(throttle, undefined, good.secret)).status).toBe(200);
  });

  it('holds at most maxClients buckets: the least recently used is forgotten', async () => {
    const throttle = new FailedAttemptThrottle({ max: 1, maxClients: 2 });
    await failTimes(throttle, '198.51.100.1', 1);
    await failTimes(throttle, '198.51.100.2', 1);
    await failTimes(throttle, '198.51.100.3', 1);
    expect((await attempt(throttle, '198.51.100.3', good.secret)).status).toBe(429);
    expect((await attempt(throttle, '198.51.100.1', good.secret)).status).toBe(200);
  });

  it.each([[{ max: 0 }], [{ windowMs: 1.5 }], [{ maxClients: -1 }], [{ shared: {} as never }]])(
    'refuses bad options at construction: %j',
    (options) => {
      expect(() => new FailedAttemptThrottle(options)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    },
  );

  it('refuses a throttle option that is not a throttle', async () => {
    await expect(authenticate({ headers: {} }, store, { throttle: {} as never })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'throttle',
    });
  });
});

describe('a shared counter', () => {
  it('adds failures up across instances', async () => {
    const c = clock();
    const counter = memoryCounter(c.now);
    const a = new FailedAttemptThrottle({ max: 4, shared: counter, clock: c.now });
    const b = new FailedAttemptThrottle({ max: 4, shared: counter, clock: c.now });
    await failTimes(a, '198.51.100.7', 2);
    await failTimes(b, '198.51.100.7', 2);
    expect((await attempt(a, '198.51.100.7', good.secret)).status).toBe(429);
    expect((await attempt(b, '198.51.100.7', good.secret)).status).toBe(429);
    expect((await attempt(b, '198.51.100.8', good.secret)).status).toBe(200);
  });

  it.each([
    ['down (rejects)', (counter: ReturnType<typeof memoryCounter>) => Object.assign(counter, { down: true })],
    [
      'hanging',
      (counter: ReturnType<typeof memoryCounter>) =>
        Object.assign(counter, {
          get: () => new Promise(() => {}),
          increment: () => new Promise(() => {}),
          reserve: () => new Promise(() => {}),
        }),
    ],
  ])('that is %s neither locks anyone out nor lifts the limit', async (_, breakIt) => {
    const errors: unknown[] = [];
    const counter = breakIt(memoryCounter(Date.now));
    const throttle = new FailedAttemptThrottle({
      max: 3,
      shared: counter,
      sharedTimeoutMs: 20,
      onError: (e) => errors.push(e),
    });
    expect((await attempt(throttle, '198.51.100.8', good.secret)).status).toBe(200);
    await failTimes(throttle, '198.51.100.7', 3);
    expect((await attempt(throttle, '198.51.100.7', good.secret)).status).toBe(429);
    expect(errors.length).toBeGreaterThan(0);
  });
});

describe('RedisAttemptCounter', async () => {
  const up = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
  const client = up ? await createClient({ url: REDIS_URL }).connect() : undefined;
  afterAll(async () => {
    // The counters' keys expire by themselves; a test still removes what it wrote.
    for await (const keys of client?.scanIterator({ MATCH: `keygate-test:${RUN_ID}:*` }) ?? []) {
      if (keys.length) await client?.del(keys);
    }
    client?.destroy();
  });

  it.runIf(up)('counts with INCR+PEXPIRE in one script, shared by two throttles; the key expires', async () => {
    const prefix = `keygate-test:${RUN_ID}:throttle:`;
    const counter = new RedisAttemptCounter({ client: client as never, prefix });
    const a = new FailedAttemptThrottle({ max: 3, windowMs: 30_000, shared: counter });
    const b = new FailedAttemptThrottle({ max: 3, windowMs: 30_000, shared: counter });
    await failTimes(a, '2001:db8:7:7::1', 2);
    await failTimes(b, '2001:db8:7:7::2', 1);
    const refused = await attempt(b, '2001:db8:7:7::3', good.secret);
    expect(refused).toMatchObject({ status: 429, code: 'too_many_failed_attempts' });
    expect(refused.ok ? 0 : refused.retryAfterSeconds).toBeGreaterThan(25);
    const ttl = Number(await client?.sendCommand(['PTTL', `${prefix}{6:20010db800070007}`]));
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
    expect(await counter.get('4:00000000')).toBeNull();
  });

  it.runIf(up)('two instances on Redis let at most max of 64 concurrent bad keys reach the store', async () => {
    const counter = new RedisAttemptCounter({ client: client as never, prefix: `keygate-test:${RUN_ID}:race:` });
    const throttles = [1, 2].map(() => new FailedAttemptThrottle({ max: 5, shared: counter, sharedTimeoutMs: 2000 }));
    const counted = countingStore(new MemoryKeyStore());
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        authenticate({ headers: { 'x-api-key': generateKey({ mode: 'live' }) }, ip: '198.51.100.63' }, counted, {
          throttle: throttles[i % 2] as FailedAttemptThrottle,
        }),
      ),
    );
    expect(counted.calls).toBeLessThanOrEqual(5);
    // Reservations are atomic and none is given back (every key is bad): exactly max lookups, not fewer.
    expect(counted.calls).toBe(5);
    expect(results.filter((r) => r.status === 401)).toHaveLength(counted.calls);
    // A third instance that never saw a failure still refuses the address: the count lives in Redis.
    const fresh = new FailedAttemptThrottle({ max: 5, shared: counter, sharedTimeoutMs: 2000 });
    expect((await attempt(fresh, '198.51.100.63', good.secret)).status).toBe(429);
  });
});

describe('concurrent failures', () => {
  /** 64 different well-formed unknown keys at once from one address, each one a store lookup. */
  async function flood(throttles: FailedAttemptThrottle[], ip: string) {
    const counted = countingStore(new MemoryKeyStore());
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        authenticate({ headers: { 'x-api-key': generateKey({ mode: 'live' }) }, ip }, counted, {
          throttle: throttles[i % throttles.length] as FailedAttemptThrottle,
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    return { lookups: counted.calls, unauthorized: statuses.filter((s) => s === 401).length, statuses };
  }

  it('64 concurrent bad keys from one address reach the store at most max times (memory)', async () => {
    const throttle = new FailedAttemptThrottle({ max: 5 });
    const { lookups, unauthorized, statuses } = await flood([throttle], '198.51.100.60');
    expect(lookups).toBeLessThanOrEqual(5);
    // Reservations are atomic and none is given back (every key is bad): exactly max lookups, not fewer.
    expect(lookups).toBe(5);
    expect(unauthorized).toBe(lookups);
    expect(statuses.filter((s) => s === 429)).toHaveLength(64 - unauthorized);
    // The window is now full: the next request, whatever key it carries, is refused without a lookup.
    expect((await attempt(throttle, '198.51.100.60', good.secret)).status).toBe(429);
  });

  it('a reservation is given back when the key turns out valid', async () => {
    const throttle = new FailedAttemptThrottle({ max: 2 });
    const counted = countingStore(new MemoryKeyStore());
    const own = await new KeyManager({ store: counted as MemoryKeyStore }).create({
      accountId: 'a',
      name: 'k',
      mode: 'live',
    });
    const send = (key: string) =>
      authenticate({ headers: { 'x-api-key': key }, ip: '198.51.100.61' }, counted, { throttle });
    for (let i = 0; i < 5; i++) expect((await send(own.secret)).status).toBe(200);
    expect((await send(generateKey({ mode: 'live' }))).status).toBe(401);
    expect((await send(own.secret)).status).toBe(200);
  });

  it('two instances sharing a counter let at most max of 64 concurrent bad keys through', async () => {
    const counter = memoryCounter(Date.now);
    const throttles = [1, 2].map(() => new FailedAttemptThrottle({ max: 5, shared: counter }));
    const { lookups, unauthorized } = await flood(throttles, '198.51.100.62');
    expect(lookups).toBeLessThanOrEqual(5);
    // Reservations are atomic and none is given back (every key is bad): exactly max lookups, not fewer.
    expect(lookups).toBe(5);
    expect(unauthorized).toBe(lookups);
    // A third instance that never saw a failure still refuses the address: the count is shared.
    const fresh = new FailedAttemptThrottle({ max: 5, shared: counter });
    expect((await attempt(fresh, '198.51.100.62', good.secret)).status).toBe(429);
  });
});

describe('through every adapter', async () => {
  const throttle = new FailedAttemptThrottle({ max: 2, windowMs: 60_000 });
  const apps = await startApps({ store, throttle }, true);
  afterAll(() => apps.close());
  const respond = createDenialResponder({ retryAfterMs: 7000 });

  it.each(apps.adapters.map(([name], i) => [name, i] as const))(
    '%s sends problem+json 429 with Retry-After',
    async (_, i) => {
      const send = (apps.adapters[i] as (typeof apps.adapters)[number])[1];
      const ip = `198.51.100.${10 + i}`;
      const request = (key: string) => ({
        path: '/v1/check',
        headers: [
          ['x-api-key', key],
          ['x-forwarded-for', ip],
        ] as Array<[string, string]>,
      });
      for (let n = 0; n < 2; n++) expect((await send(request(wrong))).status).toBe(401);
      const got = await send(request(good.secret));
      const want = respond({ code: 'too_many_failed_attempts', retryAfterSeconds: 60 });
      expect(Number(got.headers['retry-after'])).toBeGreaterThanOrEqual(59);
      expect({ ...got, headers: { ...got.headers, 'retry-after': '60' } }).toEqual({
        status: 429,
        headers: Object.fromEntries(HEADERS.map((h) => [h, want.headers[h] ?? null])),
        body: want.body,
      });
      expect(JSON.parse(got.body)).toMatchObject({ status: 429, code: 'too_many_failed_attempts' });
    },
  );
});
