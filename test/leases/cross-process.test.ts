// Leased budgets across processes, on every shared backend but Durable Objects (test/cloudflare/
// leases-workers.test.ts): three processes (bundled children, see
// test/stores/support/child-process.ts) hammer one key or one account through LeasedRateLimiter and
// LeasedCreditLedger; this process checks the shared backend and takes part as a fourth instance.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeasedCreditLedger, LeasedRateLimiter } from 'keygate';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type Child, type ChildBundle, startChild } from '../stores/support/child-process.js';
import { mysqlAvailable, openTestDatabase, type TestDatabase } from '../stores/support/mysql.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { clusterAvailable, startRedisCluster } from '../support/redis-cluster.js';
import { type BackendKind, type Opened, openBackend } from './support/backends.js';
import { LATE_AFTER_MS, spendUntilRefused } from './support/hammer.js';

const postgres = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const mariadb = await mysqlAvailable();
const cluster = await clusterAvailable();

const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  bundle = await bundleChild(join(import.meta.dirname, 'support/lease-child.ts'));
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
});

interface Place {
  url: string;
  ns: string;
}

async function redisPlace(): Promise<Place> {
  const ns = `keygate:test:${RUN_ID}:lease:`;
  cleanups.push(async () => {
    const client = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of client.scanIterator({ MATCH: `${ns}*` })) if (keys.length) await client.del(keys);
    client.destroy();
  });
  return { url: REDIS_URL, ns };
}

async function postgresPlace(): Promise<Place> {
  const ns = `keygate_lease${RUN_ID}`;
  cleanups.push(async () => {
    const pool = new pg.Pool({ connectionString: PG_URL });
    await pool.query(`DROP SCHEMA IF EXISTS "${ns}" CASCADE`);
    await pool.end();
  });
  return { url: PG_URL, ns };
}

async function mysqlPlace(): Promise<Place> {
  const db: TestDatabase = await openTestDatabase('lease');
  cleanups.push(() => db.drop());
  return { url: db.url, ns: 'keygate_' };
}

// One file in a folder of its own: every process opens it with its own connection.
async function sqlitePlace(): Promise<Place> {
  const folder = await mkdtemp(join(tmpdir(), `keygate-lease-${RUN_ID}-`));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return { url: join(folder, 'keygate.db'), ns: '' };
}

// Three masters started for this file; each process opens its own node-redis cluster client. No hash
// tag in the prefix: keys and accounts land on whichever master their slot says.
async function clusterPlace(): Promise<Place> {
  const started = await startRedisCluster();
  cleanups.push(() => started.stop());
  return { url: started.urls.join(','), ns: `keygate:test:${RUN_ID}:lease:` };
}

const backends = [
  { name: 'Redis', kind: 'redis' as BackendKind, available: redis, place: redisPlace },
  {
    name: 'Redis Cluster (three masters)',
    kind: 'redis-cluster' as BackendKind,
    available: cluster,
    place: clusterPlace,
  },
  { name: 'SQLite (one file)', kind: 'sqlite' as BackendKind, available: true, place: sqlitePlace },
  { name: 'PostgreSQL', kind: 'postgres' as BackendKind, available: postgres, place: postgresPlace },
  { name: 'MariaDB', kind: 'mysql' as BackendKind, available: mariadb, place: mysqlPlace },
].filter((b) => b.available);

interface Ran {
  allowed: number;
  refused: number;
  charged: Record<string, number>;
  held: number;
}

let ids = 0;
const fresh = (label: string) => `${label}_${RUN_ID}_${++ids}`;

describe.skipIf(backends.length === 0).each(backends)('leased budgets across three processes: $name', (b) => {
  let place: Place;
  let shared: Opened;

  beforeAll(async () => {
    place = await b.place();
    shared = await openBackend(b.kind, place.url, place.ns);
    cleanups.push(() => shared.end());
    await shared.migrate();
  });

  function children(args: Record<string, unknown>, count = 3): Child[] {
    return Array.from({ length: count }, () =>
      startChild(bundle!.file, { kind: b.kind, url: place.url, ns: place.ns, ...args }, cleanups),
    );
  }
  const ready = (cs: Child[]) => Promise.all(cs.map((c) => c.next('ready')));
  async function all(cs: Child[], command: string, tag: string): Promise<Ran[]> {
    for (const c of cs) c.send(`${command.split(' ')[0]} ${tag} ${command.split(' ')[1] ?? ''}`);
    return (await Promise.all(cs.map((c) => c.next(tag)))) as unknown as Ran[];
  }
  const sum = (rs: Ran[], f: (r: Ran) => number) => rs.reduce((n, r) => n + f(r), 0);

  it('limits: three processes x 150 requests on a limit of 300 allow at most 300, and close() gives every unspent unit back', async () => {
    const id = fresh('key_hammer');
    const maxSlice = 10;
    const cs = children({ mode: 'limit', id, limit: 300, windowMs: 60_000, maxSlice, divisor: 4, concurrency: 8 });
    await ready(cs);
    const ran = await all(cs, 'run 150', 'ran');
    const allowed = sum(ran, (r) => r.allowed);
    expect(allowed).toBeLessThanOrEqual(300);
    expect(300 - allowed).toBeLessThanOrEqual(2 * (maxSlice - 1));
    await all(cs, 'close', 'closed');
    expect((await shared.limiter.consume(id, { limit: 300, windowMs: 60_000 }, 0)).remaining).toBe(300 - allowed);
  }, 60_000);

  it('limits: a fourth instance is refused only once at most 3 * (maxSlice - 1) units sit unspent in the others, and gets exactly those once they close', async () => {
    const id = fresh('key_bound');
    const maxSlice = 10;
    const policy = { limit: 300, windowMs: 60_000 };
    const cs = children({ mode: 'limit', id, ...policy, maxSlice, divisor: 1, concurrency: 4 });
    await ready(cs);
    const ran = await all(cs, 'run 20', 'ran');
    expect(sum(ran, (r) => r.allowed)).toBe(60);
    const held = sum(ran, (r) => r.held);
    const mine = new LeasedRateLimiter({ limiter: shared.limiter, maxSlice, divisor: 1, timeoutMs: LATE_AFTER_MS });
    let allowed = 0;
    while ((await mine.consume(id, policy, 1)).allowed) allowed++;
    // Every unit of the window is spent or sits in a slice; the slices hold at most (4 - 1) * (maxSlice - 1).
    expect(60 + allowed + held).toBe(300);
    expect(held).toBeLessThanOrEqual(3 * (maxSlice - 1));
    await all(cs, 'close', 'closed');
    let after = 0;
    while ((await mine.consume(id, policy, 1)).allowed) after++;
    expect(after).toBe(held);
    await mine.close();
  }, 60_000);

  it("limits: a SIGKILLed process's slice stays counted until its window ends, then the key has its whole limit", async () => {
    const id = fresh('key_killed');
    const policy = { limit: 100, windowMs: 3_000 };
    const [c] = children({ mode: 'limit', id, ...policy, maxSlice: 50, divisor: 1, concurrency: 1 }, 1);
    await ready([c as Child]);
    const [ran] = await all([c as Child], 'run 1', 'ran');
    expect(ran?.held).toBe(49);
    c?.process.kill('SIGKILL');
    const before = await shared.limiter.consume(id, policy, 0);
    expect(before.remaining).toBe(50);
    let now = before;
    for (const deadline = Date.now() + 15_000; now.remaining !== 100 && Date.now() < deadline; ) {
      await sleep(200);
      now = await shared.limiter.consume(id, policy, 0);
    }
    expect(now.remaining).toBe(100);
  }, 30_000);

  it('credits: three processes x 150 billed requests on 300 credits never overdraw; entries charge each key what it spent; reconcile is ok', async () => {
    const id = fresh('acct_hammer');
    await shared.ledger.topUp(id, 300);
    const maxSlice = 10;
    const cs = children({
      mode: 'credit',
      id,
      limit: 1,
      windowMs: 1,
      maxSlice,
      divisor: 2,
      concurrency: 8,
      keys: ['key_a', 'key_b'],
    });
    await ready(cs);
    const ran = await all(cs, 'run 150', 'ran');
    const served = sum(ran, (r) => r.allowed);
    const byKey = (k: string) => sum(ran, (r) => r.charged[k] ?? 0);
    expect(served).toBeLessThanOrEqual(300);
    expect(byKey('key_a') + byKey('key_b')).toBe(served);
    // At most maxSlice - 1 credits per process and key were left in a slice at the end.
    expect(300 - served).toBeLessThanOrEqual(3 * 2 * (maxSlice - 1));
    await all(cs, 'close', 'closed');
    expect(await shared.ledger.balance(id)).toBe(300 - served);
    const entries = await shared.ledger.entries(id, { limit: 1000 });
    const charges = (k: string) =>
      entries.filter((e) => e.kind === 'charge' && e.keyId === k).reduce((n, e) => n - e.amount, 0);
    expect([charges('key_a'), charges('key_b')]).toEqual([byKey('key_a'), byKey('key_b')]);
    expect(await shared.ledger.reconcile(id)).toMatchObject({ balance: 300 - served, held: 0, ok: true });
  }, 60_000);

  it('credits: a fourth instance is refused only once at most 3 * (maxSlice - 1) credits of the key sit free in the others, and gets exactly those once they close', async () => {
    const id = fresh('acct_bound');
    await shared.ledger.topUp(id, 300);
    const maxSlice = 10;
    const cs = children({ mode: 'credit', id, limit: 1, windowMs: 1, maxSlice, divisor: 1, concurrency: 4 });
    await ready(cs);
    const ran = await all(cs, 'run 20', 'ran');
    expect(sum(ran, (r) => r.allowed)).toBe(60);
    const free = sum(ran, (r) => r.held);
    const mine = new LeasedCreditLedger({ ledger: shared.ledger, maxSlice, divisor: 1, timeoutMs: LATE_AFTER_MS });
    const spend = () => spendUntilRefused(mine, id, 'key_a');
    const served = await spend();
    expect(60 + served + free).toBe(300);
    expect(free).toBeLessThanOrEqual(3 * (maxSlice - 1));
    await all(cs, 'close', 'closed');
    expect(await spend()).toBe(free);
    await mine.close();
    expect(await shared.ledger.balance(id)).toBe(0);
    expect(await shared.ledger.reconcile(id)).toMatchObject({ entries: 0, balance: 0, held: 0, ok: true });
  }, 60_000);

  it("credits: a SIGKILLed process's slice lapses after sliceTtlMs and its credits return; the ledger reconciles", async () => {
    const id = fresh('acct_killed');
    await shared.ledger.topUp(id, 100);
    const [c] = children(
      // maxSlice 80: slices of 40 (half of it), the first request's among them.
      { mode: 'credit', id, limit: 1, windowMs: 1, maxSlice: 80, divisor: 1, sliceTtlMs: 2_000, concurrency: 1 },
      1,
    );
    await ready([c as Child]);
    const [ran] = await all([c as Child], 'run 1', 'ran');
    expect(ran).toMatchObject({ allowed: 1, held: 39 });
    c?.process.kill('SIGKILL');
    expect(await shared.ledger.balance(id)).toBe(60);
    let balance = 60;
    for (const deadline = Date.now() + 10_000; balance !== 100 && Date.now() < deadline; ) {
      await sleep(200);
      balance = await shared.ledger.balance(id);
    }
    // The killed process's one settled request was never charged: under-billing, never an overdraft.
    expect(balance).toBe(100);
    expect(await shared.ledger.reconcile(id)).toMatchObject({ entries: 100, balance: 100, held: 0, ok: true });
  }, 30_000);
});
