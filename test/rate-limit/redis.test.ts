import type { KeygateEvent } from 'keygate';
import { RedisRateLimiter } from 'keygate/redis';
import { describeRateLimiterContract } from 'keygate/testing';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FallbackRateLimiter } from '../../src/rate-limit/fallback.js';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { freshKey } from './support/fresh-key.js';

const available = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const PREFIX = `keygate:test:${RUN_ID}:rl:`;
const clients: { isOpen: boolean; destroy(): void }[] = [];
const proxies: TcpProxy[] = [];

async function client(url = REDIS_URL) {
  const c = createClient({ url, socket: { connectTimeout: 10_000, reconnectStrategy: () => 100 } });
  // A dropped connection is reported here; node-redis reconnects by itself.
  c.on('error', () => {});
  clients.push(c);
  await c.connect();
  return c;
}

/** A client that reaches Redis through a proxy the test can cut. */
async function proxied() {
  const { hostname, port } = new URL(REDIS_URL);
  const proxy = new TcpProxy(hostname, Number(port || 6379));
  proxies.push(proxy);
  const url = new URL(REDIS_URL);
  url.hostname = '127.0.0.1';
  url.port = String(await proxy.resume());
  return { proxy, redis: await client(url.toString()) };
}

afterAll(async () => {
  if (!available) return;
  for (const proxy of proxies) await proxy.cut();
  const admin = await client();
  for await (const keys of admin.scanIterator({ MATCH: `${PREFIX}*`, COUNT: 1000 })) {
    if (keys.length > 0) await admin.del(keys);
  }
  for (const c of clients) if (c.isOpen) c.destroy();
});

describe.skipIf(!available)('RedisRateLimiter', () => {
  // One connection for the contract's tests (each limiter is cheap; connections are shared with other runs).
  let shared: Awaited<ReturnType<typeof client>> | undefined;
  describeRateLimiterContract(
    'RedisRateLimiter',
    async () => {
      shared ??= await client();
      return {
        limiter: new RedisRateLimiter({ client: shared, prefix: PREFIX, timeoutMs: 10_000 }),
        stalled: (timeoutMs) => {
          let fail: (err: Error) => void = () => {};
          const silent = { sendCommand: () => new Promise<unknown>((_, reject) => (fail = reject)) };
          return { limiter: new RedisRateLimiter({ client: silent, timeoutMs }), unstick: (err) => fail(err) };
        },
        ended: async () => {
          const redis = await client();
          const ended = new RedisRateLimiter({ client: redis, prefix: PREFIX });
          await ended.consume(freshKey(), { limit: 5, windowMs: 60_000 }, 1);
          redis.destroy();
          return ended;
        },
        severable: async () => {
          // The deadline, not a socket error, ends the wait while the connection is cut.
          const { proxy, redis } = await proxied();
          const severed = new RedisRateLimiter({ client: redis, prefix: PREFIX, timeoutMs: 300 });
          return { limiter: severed, cut: () => proxy.cut(), restore: async () => void (await proxy.resume()) };
        },
      };
    },
    { describe, it, expect, beforeEach, afterEach },
    { hooks: ['stalled', 'ended', 'severable'] },
  );

  it('keeps one counter per key that expires with its window', async () => {
    const redis = await client();
    const limiter = new RedisRateLimiter({ client: redis, prefix: PREFIX });
    const key = freshKey('ttl');
    await limiter.consume(key, { limit: 10, windowMs: 5000 }, 3);
    expect(await redis.get(`${PREFIX}${key}`)).toBe('3');
    const ttl = await redis.pTTL(`${PREFIX}${key}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5000);
  });

  it('sends one command per request once its script is loaded', async () => {
    const redis = await client();
    let commands = 0;
    const counting = {
      sendCommand: (args: string[]) => {
        commands++;
        return redis.sendCommand(args);
      },
    };
    const limiter = new RedisRateLimiter({ client: counting, prefix: PREFIX });
    const key = freshKey('trips');
    await limiter.consume(key, { limit: 100, windowMs: 60_000 }, 1); // SCRIPT LOAD, then EVALSHA
    commands = 0;
    for (let i = 0; i < 10; i++) await limiter.consume(key, { limit: 100, windowMs: 60_000 }, 1);
    expect(commands).toBe(10);
  });

  it('reloads its script after the server forgot it (SCRIPT FLUSH)', async () => {
    const redis = await client();
    const limiter = new RedisRateLimiter({ client: redis, prefix: PREFIX });
    const key = freshKey('flush');
    await limiter.consume(key, { limit: 5, windowMs: 60_000 }, 1);
    await redis.scriptFlush();
    expect(await limiter.consume(key, { limit: 5, windowMs: 60_000 }, 1)).toMatchObject({
      allowed: true,
      remaining: 3,
    });
  });

  it('lets a FallbackRateLimiter limit per process while Redis is cut, counting on from the window it last saw, with one degraded event', async () => {
    const { proxy, redis } = await proxied();
    const events: KeygateEvent[] = [];
    const limiter = new FallbackRateLimiter({
      limiter: new RedisRateLimiter({ client: redis, prefix: PREFIX, timeoutMs: 200 }),
      onEvent: (e) => void events.push(e),
    });
    const key = freshKey('fallback');
    expect(await limiter.consume(key, { limit: 2, windowMs: 60_000 }, 1)).toMatchObject({ allowed: true });
    await proxy.cut();
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume(key, { limit: 2, windowMs: 60_000 }, 1));
    // One of the two units was used before the cut: one is left.
    expect(decisions.map((d) => d.allowed)).toEqual([true, false, false, false]);
    expect(events).toMatchObject([{ type: 'ratelimit.degraded', limiter: 'RedisRateLimiter' }]);
  });

  it.each([
    ['client', { client: {} }],
    ['prefix', { prefix: 'rate limit:' }],
    ['timeoutMs', { timeoutMs: 0 }],
    ['timeoutMs', { timeoutMs: Number.POSITIVE_INFINITY }],
  ])('refuses a bad %s option at construction', async (field, options) => {
    const redis = await client();
    expect(() => new RedisRateLimiter({ client: redis, ...options } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});
