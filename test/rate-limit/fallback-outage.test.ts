// Four processes (each with its own limiter and Redis client, through one relay) limit one key with
// `authenticate`'s `rateLimit`; the relay is cut and each process falls back to counting alone. What
// the guide promises then (docs/guide/rate-limits.md): in all, at most N times the limit per window,
// the units the shared window allowed before the cut included, because each process counts on from
// the shared window as it last saw it.
import { authenticate, KeyManager, LeasedRateLimiter, MemoryKeyStore, type RateLimiter } from 'keygate';
import { RedisRateLimiter } from 'keygate/redis';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const available = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const PREFIX = `keygate:test:${RUN_ID}:fallback:`;
const N = 4;
const LIMIT = 100;
// Long enough for the traffic before the cut and the local counting after it; short enough to wait out.
const WINDOW_MS = 4_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  if (!available) return;
  cleanups.unshift(async () => {
    const admin = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of admin.scanIterator({ MATCH: `${PREFIX}*` })) if (keys.length) await admin.del(keys);
    admin.destroy();
  });
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** N processes' limiters over one Redis, each with a client of its own through one relay. */
async function processes(
  wrap: (limiter: RedisRateLimiter) => RateLimiter,
  rateLimit = { limit: LIMIT, windowMs: WINDOW_MS },
) {
  const target = new URL(REDIS_URL);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
  cleanups.push(() => proxy.cut());
  target.hostname = '127.0.0.1';
  target.port = String(await proxy.resume());
  const limiters = await Promise.all(
    Array.from({ length: N }, async () => {
      const client = createClient({ url: target.toString(), socket: { reconnectStrategy: () => 100 } });
      client.on('error', () => {});
      await client.connect();
      cleanups.push(async () => client.destroy());
      return wrap(new RedisRateLimiter({ client, prefix: PREFIX, timeoutMs: 250 }));
    }),
  );
  const store = new MemoryKeyStore();
  const { secret } = await new KeyManager({ store }).create({
    accountId: 'acct_1',
    mode: 'live',
    name: 'limited',
    rateLimit,
  });
  const request = { headers: { 'x-api-key': secret }, ip: '203.0.113.7' };
  const options = limiters.map((limiter) => ({ rateLimit: { limiter } }));
  let resetMs = 0;
  /** Units each process allowed since the count was last reset. */
  const allowedBy = Array.from({ length: N }, () => 0);
  /** One request through process `p`: whether it was allowed (200) or refused (429). */
  const serve = async (p: number): Promise<boolean> => {
    const result = await authenticate(request, store, options[p]);
    if (!result.ok && result.status !== 429) throw new Error(`unexpected ${result.status} ${result.code}`);
    resetMs = Math.max(resetMs, result.rateLimit?.resetMs ?? 0);
    if (result.ok) allowedBy[p] = (allowedBy[p] as number) + 1;
    return result.ok;
  };
  /** Requests through process `p` until its first 429: how many it allowed. */
  const untilRefused = async (p: number): Promise<number> => {
    let allowed = 0;
    while (await serve(p)) allowed++;
    return allowed;
  };
  return { proxy, serve, untilRefused, allowedBy, windowEndsWithin: () => resetMs };
}

const total = (counts: number[]) => counts.reduce((a, b) => a + b, 0);

describe.skipIf(!available)('the per-process fallback through a cut, four processes', () => {
  it('lets each process allow at most the limit in the window the cut began in, its units before the cut included, and a full limit in each window after', async () => {
    const { proxy, serve, untilRefused, allowedBy, windowEndsWithin } = await processes((limiter) => limiter);
    // Processes 1 to 3 see the window early (1, 2 and 3 units used); process 0 fills it to the limit.
    for (let p = 1; p < N; p++) expect(await serve(p)).toBe(true);
    await untilRefused(0);
    expect(total(allowedBy)).toBe(LIMIT);
    await proxy.cut();
    const alone = [];
    for (let p = 0; p < N; p++) alone.push(await untilRefused(p));
    if (process.env.KEYGATE_OUTAGE_LOG) console.log('plain', { alone, allowedBy });
    // Each allows alone what the window had left when it last heard from Redis: 0, 99, 98, 97.
    expect(alone).toEqual([0, LIMIT - 1, LIMIT - 2, LIMIT - 3]);
    for (const allowed of allowedBy) expect(allowed).toBeLessThanOrEqual(LIMIT);
    expect(total(allowedBy)).toBeLessThanOrEqual(N * LIMIT);
    // The next window, still cut off: a full limit per process.
    await sleep(windowEndsWithin() + 50);
    allowedBy.fill(0);
    for (let p = 0; p < N; p++) await untilRefused(p);
    expect(allowedBy).toEqual([LIMIT, LIMIT, LIMIT, LIMIT]);
  }, 30_000);

  it('counts on from what a leased slice last saw of the window, its top-ups included', async () => {
    const limit = 1_000;
    const leased = (limiter: RedisRateLimiter) => new LeasedRateLimiter({ limiter });
    const { proxy, serve, untilRefused, allowedBy } = await processes(leased, { limit, windowMs: 60_000 });
    // Most of the window goes to the four processes in turn, from slices topped up in the background:
    // after a process's first request, no answer of the shared limiter passes through its fallback.
    for (let i = 0; i < 700; i++) await serve(i % N);
    expect(total(allowedBy)).toBe(700);
    await proxy.cut();
    for (let p = 0; p < N; p++) await untilRefused(p);
    if (process.env.KEYGATE_OUTAGE_LOG) console.log('leased', { allowedBy });
    for (const allowed of allowedBy) expect(allowed).toBeLessThanOrEqual(limit);
    expect(total(allowedBy)).toBeLessThanOrEqual(N * limit);
  }, 30_000);
});
