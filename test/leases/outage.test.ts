// A leased ledger's crash bound under a store outage, on Redis and PostgreSQL: a child process spends
// through LeasedCreditLedger with a TCP proxy in front of the store; the proxy cuts every connection,
// the child serves until it is refused, and is killed with SIGKILL; its slices then lapse. What it
// served and the store never charged stays within maxSlice per account and key.
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from '../stores/support/child-process.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { type BackendKind, type Opened, openBackend } from './support/backends.js';

const postgres = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');

const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  bundle = await bundleChild(join(import.meta.dirname, 'support/outage-child.ts'));
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
});

const backends = [
  {
    name: 'Redis',
    kind: 'redis' as BackendKind,
    available: redis,
    url: REDIS_URL,
    ns: `keygate:test:${RUN_ID}:outage:`,
    drop: async (ns: string) => {
      const client = await createClient({ url: REDIS_URL }).connect();
      for await (const keys of client.scanIterator({ MATCH: `${ns}*` })) if (keys.length) await client.del(keys);
      client.destroy();
    },
  },
  {
    name: 'PostgreSQL',
    kind: 'postgres' as BackendKind,
    available: postgres,
    url: PG_URL,
    ns: `keygate_outage${RUN_ID}`,
    drop: async (ns: string) => {
      const pool = new pg.Pool({ connectionString: PG_URL });
      await pool.query(`DROP SCHEMA IF EXISTS "${ns}" CASCADE`);
      await pool.end();
    },
  },
].filter((b) => b.available);

describe.skipIf(backends.length === 0).each(backends)('a leased ledger through a store outage: $name', (b) => {
  let shared: Opened;

  beforeAll(async () => {
    cleanups.push(() => b.drop(b.ns));
    shared = await openBackend(b.kind, b.url, b.ns);
    cleanups.push(() => shared.end());
    await shared.migrate();
  });

  it('a process killed during the outage leaves at most maxSlice credits per key served and never charged; its slices lapse and reconcile() is ok', async () => {
    const target = new URL(b.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || (b.kind === 'redis' ? 6379 : 5432)));
    cleanups.push(() => proxy.cut());
    const url = new URL(b.url);
    url.port = String(await proxy.resume());
    const accountId = `acct_outage_${RUN_ID}`;
    await shared.ledger.topUp(accountId, 10_000);
    const maxSlice = 100;
    // Two states the cut may find a key in: key_a 30 credits into its first slice, key_b past its first
    // slice and into the next (whichever slices the ledger holds by then, and their next ones).
    const child = startChild(
      bundle!.file,
      {
        kind: b.kind,
        url: url.href,
        ns: b.ns,
        accountId,
        spend: { key_a: 30, key_b: 55 },
        maxSlice,
        sliceTtlMs: 3_000,
        timeoutMs: 500,
      },
      cleanups,
    );
    await child.next('ready');
    child.send('spend before');
    const before = (await child.next('before')).spent as Record<string, number>;
    expect(before).toEqual({ key_a: 30, key_b: 55 });

    await proxy.cut();
    child.send('serve during');
    const during = await child.next('during');
    // Every request after the outage began was served from slices already held, until one was refused
    // with the ledger's 503 (never a request served unbilled beyond the bound).
    expect(during.failed).toEqual({ key_a: 'credit_ledger_unavailable', key_b: 'credit_ledger_unavailable' });
    const spent = during.spent as Record<string, number>;
    child.process.kill('SIGKILL');
    await proxy.resume();

    // Its slices lapse (sliceTtlMs), and every credit not charged comes back.
    let figures = await shared.ledger.reconcile(accountId);
    for (const deadline = Date.now() + 15_000; figures.held > 0 && Date.now() < deadline; ) {
      await sleep(200);
      figures = await shared.ledger.reconcile(accountId);
    }
    const entries = await shared.ledger.entries(accountId, { limit: 1000 });
    const charged = (k: string) =>
      entries.filter((e) => e.kind === 'charge' && e.keyId === k).reduce((n, e) => n - e.amount, 0);
    const unbilled = { key_a: (spent.key_a ?? 0) - charged('key_a'), key_b: (spent.key_b ?? 0) - charged('key_b') };
    console.log(`${b.name}: spent ${JSON.stringify(spent)}, unbilled ${JSON.stringify(unbilled)}`);
    expect(unbilled.key_a).toBeLessThanOrEqual(maxSlice);
    expect(unbilled.key_b).toBeLessThanOrEqual(maxSlice);
    // Never over-billed: nothing charged that was not served.
    expect(unbilled.key_a).toBeGreaterThanOrEqual(0);
    expect(unbilled.key_b).toBeGreaterThanOrEqual(0);
    const total = charged('key_a') + charged('key_b');
    expect(figures).toMatchObject({ balance: 10_000 - total, held: 0, ok: true });
  }, 30_000);
});
