// Leased budgets on Durable Objects: three Workers (three isolates of one workerd, each its own
// LeasedRateLimiter / LeasedCreditLedger, as three colos' isolates would hold them) hammer one key or
// one account through the same object namespace at once; Node checks the objects and takes part as
// a fourth instance through Miniflare's proxy. The same bounds as test/leases/cross-process.test.ts.
import { LeasedCreditLedger, LeasedRateLimiter } from 'keygate';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  DurableObjectCreditLedger,
  DurableObjectRateLimiter,
} from '../../backends/cloudflare/durable-objects/index.js';
import { bundleWorker } from '../frameworks/workerd.js';
import { type HammerArgs, type Ran, spendUntilRefused } from '../leases/support/hammer.js';
import { ledgerOn, limiterOn, neverSent } from './support/objects.js';

const WORKERS = ['leased_a', 'leased_b', 'leased_c'];
const objects = { scriptName: 'objects', useSQLite: true };
let mf: Miniflare;
let shared: { limiter: DurableObjectRateLimiter; ledger: DurableObjectCreditLedger };

beforeAll(async () => {
  const [objectsScript, leasedScript, fanoutScript] = await Promise.all([
    bundleWorker(new URL('./worker/objects.ts', import.meta.url)),
    bundleWorker(new URL('./worker/leased.ts', import.meta.url)),
    bundleWorker(new URL('./worker/fanout.ts', import.meta.url)),
  ]);
  mf = new Miniflare({
    workers: [
      {
        name: 'objects',
        modules: true,
        script: objectsScript,
        compatibilityDate: '2024-09-23',
        durableObjects: {
          KEYGATE_LIMITS: { className: 'KeygateRateLimitObject', useSQLite: true },
          KEYGATE_CREDITS: { className: 'KeygateCreditObject', useSQLite: true },
        },
      },
      ...WORKERS.map((name) => ({
        name,
        modules: true,
        script: leasedScript,
        compatibilityDate: '2024-09-23',
        durableObjects: {
          KEYGATE_LIMITS: { className: 'KeygateRateLimitObject', ...objects },
          KEYGATE_CREDITS: { className: 'KeygateCreditObject', ...objects },
        },
      })),
      {
        name: 'fanout',
        modules: true,
        script: fanoutScript,
        compatibilityDate: '2024-09-23',
        serviceBindings: { LEASED_A: 'leased_a', LEASED_B: 'leased_b', LEASED_C: 'leased_c' },
      },
    ],
  });
  shared = { limiter: await limiterOn(mf), ledger: await ledgerOn(mf) };
}, 60_000);
afterAll(() => mf?.dispose());

let ids = 0;
const fresh = (label: string) => `${label}_${process.pid}_${++ids}`;
const sum = (rs: Ran[], f: (r: Ran) => number) => rs.reduce((n, r) => n + f(r), 0);

/** What a Worker handle offers the test: its `fetch`, answered by the Worker's handler. */
interface Fetcher {
  fetch(url: string, init: { method: string; body: string }): Promise<{ status: number; json(): Promise<unknown> }>;
}

/** Opens a leased limiter and ledger in each of `count` Workers, then sends each the same call at once. */
async function workers(args: HammerArgs, count = WORKERS.length) {
  const fetchers = (await Promise.all(
    WORKERS.slice(0, count).map((name) => mf.getWorker(name)),
  )) as unknown as Fetcher[];
  const call = async (path: string, body: unknown, to: typeof fetchers = fetchers) =>
    Promise.all(
      to.map(async (w) => {
        const init = { method: 'POST', body: JSON.stringify(body) };
        const url = `https://leased.test${path}`;
        const res = await w.fetch(url, init).catch((err: unknown) => {
          if (!neverSent(err)) throw err;
          return w.fetch(url, init);
        });
        const answer = (await res.json()) as Record<string, unknown>;
        if (res.status !== 200) throw new Error(`${path}: ${JSON.stringify(answer)}`);
        return answer;
      }),
    );
  await call('/open', args);
  return {
    run: async (n: number) => (await call('/run', { n })) as unknown as Ran[],
    /** `n` incoming requests to each Worker at once, each serving one request (sent by the fan-out Worker). */
    one: async (n: number) =>
      ((await call('/', { n }, [(await mf.getWorker('fanout')) as unknown as Fetcher])) as unknown as Ran[][])[0] ?? [],
    close: () => call('/close', {}),
    /** Drops the Worker's limiter and ledger without close(), as an evicted isolate does. */
    forget: () => call('/open', args),
  };
}

describe('leased budgets across three Workers on one Durable Object namespace', () => {
  it('limits: three Workers x 150 requests on a limit of 300 allow at most 300, and close() gives every unspent unit back', async () => {
    const id = fresh('key_hammer');
    const maxSlice = 10;
    const policy = { limit: 300, windowMs: 60_000 };
    const ws = await workers({ mode: 'limit', id, ...policy, maxSlice, divisor: 4, concurrency: 8 });
    const allowed = sum(await ws.run(150), (r) => r.allowed);
    expect(allowed).toBeLessThanOrEqual(300);
    expect(300 - allowed).toBeLessThanOrEqual(2 * (maxSlice - 1));
    await ws.close();
    expect((await shared.limiter.consume(id, policy, 0)).remaining).toBe(300 - allowed);
  }, 30_000);

  it('limits: a fourth instance is refused only once at most 3 * (maxSlice - 1) units sit unspent in the Workers, and gets exactly those once they close', async () => {
    const id = fresh('key_bound');
    const maxSlice = 10;
    const policy = { limit: 300, windowMs: 60_000 };
    const ws = await workers({ mode: 'limit', id, ...policy, maxSlice, divisor: 1, concurrency: 4 });
    const ran = await ws.run(20);
    expect(sum(ran, (r) => r.allowed)).toBe(60);
    const held = sum(ran, (r) => r.held);
    const mine = new LeasedRateLimiter({ limiter: shared.limiter, maxSlice, divisor: 1 });
    let allowed = 0;
    while ((await mine.consume(id, policy, 1)).allowed) allowed++;
    expect(60 + allowed + held).toBe(300);
    expect(held).toBeLessThanOrEqual(3 * (maxSlice - 1));
    await ws.close();
    let after = 0;
    while ((await mine.consume(id, policy, 1)).allowed) after++;
    expect(after).toBe(held);
    await mine.close();
  }, 30_000);

  it("limits: 3 Workers x 50 concurrent incoming requests, sharing each isolate's slice, allow at most the limit of 100 and give back the rest on close()", async () => {
    const id = fresh('key_requests');
    const maxSlice = 10;
    const policy = { limit: 100, windowMs: 60_000 };
    const ws = await workers({ mode: 'limit', id, ...policy, maxSlice, divisor: 4, concurrency: 1 });
    const allowed = sum(await ws.one(50), (r) => r.allowed);
    expect(allowed).toBeLessThanOrEqual(100);
    expect(100 - allowed).toBeLessThanOrEqual(2 * (maxSlice - 1));
    await ws.close();
    expect((await shared.limiter.consume(id, policy, 0)).remaining).toBe(100 - allowed);
  }, 30_000);

  it("credits: 3 Workers x 50 concurrent incoming billed requests, sharing each isolate's slice, never overdraw 100 credits and charge what they spent", async () => {
    const id = fresh('acct_requests');
    await shared.ledger.topUp(id, 100);
    const maxSlice = 10;
    const ws = await workers({ mode: 'credit', id, limit: 1, windowMs: 1, maxSlice, divisor: 2, concurrency: 1 });
    const served = sum(await ws.one(50), (r) => r.allowed);
    expect(served).toBeLessThanOrEqual(100);
    expect(100 - served).toBeLessThanOrEqual(2 * (maxSlice - 1));
    await ws.close();
    expect(await shared.ledger.balance(id)).toBe(100 - served);
    const entries = await shared.ledger.entries(id, { limit: 1000 });
    expect(entries.filter((e) => e.kind === 'charge').reduce((n, e) => n - e.amount, 0)).toBe(served);
    expect(await shared.ledger.reconcile(id)).toMatchObject({ balance: 100 - served, held: 0, ok: true });
  }, 30_000);

  it('limits: a Worker that drops its slice without close() (an evicted isolate) leaves it counted until its window ends, then the key has its whole limit', async () => {
    const id = fresh('key_dropped');
    const policy = { limit: 100, windowMs: 3_000 };
    const w = await workers({ mode: 'limit', id, ...policy, maxSlice: 50, divisor: 1, concurrency: 1 }, 1);
    const [ran] = await w.run(1);
    expect(ran?.held).toBe(49);
    await w.forget();
    const before = await shared.limiter.consume(id, policy, 0);
    expect(before.remaining).toBe(50);
    let now = before;
    for (const deadline = Date.now() + 15_000; now.remaining !== 100 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      now = await shared.limiter.consume(id, policy, 0);
    }
    expect(now.remaining).toBe(100);
  }, 30_000);

  it('credits: three Workers x 150 billed requests on 300 credits never overdraw; entries charge each key what it spent; reconcile is ok', async () => {
    const id = fresh('acct_hammer');
    await shared.ledger.topUp(id, 300);
    const maxSlice = 10;
    const ws = await workers({
      mode: 'credit',
      id,
      limit: 1,
      windowMs: 1,
      maxSlice,
      divisor: 2,
      concurrency: 8,
      keys: ['key_a', 'key_b'],
    });
    const ran = await ws.run(150);
    const served = sum(ran, (r) => r.allowed);
    const byKey = (k: string) => sum(ran, (r) => r.charged[k] ?? 0);
    expect(served).toBeLessThanOrEqual(300);
    expect(byKey('key_a') + byKey('key_b')).toBe(served);
    expect(300 - served).toBeLessThanOrEqual(3 * 2 * (maxSlice - 1));
    await ws.close();
    expect(await shared.ledger.balance(id)).toBe(300 - served);
    const entries = await shared.ledger.entries(id, { limit: 1000 });
    const charges = (k: string) =>
      entries.filter((e) => e.kind === 'charge' && e.keyId === k).reduce((n, e) => n - e.amount, 0);
    expect([charges('key_a'), charges('key_b')]).toEqual([byKey('key_a'), byKey('key_b')]);
    expect(await shared.ledger.reconcile(id)).toMatchObject({ balance: 300 - served, held: 0, ok: true });
  }, 30_000);

  it('credits: a fourth instance is refused only once at most 3 * (maxSlice - 1) credits of the key sit free in the Workers, and gets exactly those once they close', async () => {
    const id = fresh('acct_bound');
    await shared.ledger.topUp(id, 300);
    const maxSlice = 10;
    const ws = await workers({ mode: 'credit', id, limit: 1, windowMs: 1, maxSlice, divisor: 1, concurrency: 4 });
    const ran = await ws.run(20);
    expect(sum(ran, (r) => r.allowed)).toBe(60);
    const free = sum(ran, (r) => r.held);
    const mine = new LeasedCreditLedger({ ledger: shared.ledger, maxSlice, divisor: 1 });
    const spend = () => spendUntilRefused(mine, id, 'key_a');
    const served = await spend();
    expect(60 + served + free).toBe(300);
    expect(free).toBeLessThanOrEqual(3 * (maxSlice - 1));
    await ws.close();
    expect(await spend()).toBe(free);
    await mine.close();
    expect(await shared.ledger.balance(id)).toBe(0);
    expect(await shared.ledger.reconcile(id)).toMatchObject({ entries: 0, balance: 0, held: 0, ok: true });
  }, 30_000);
});
