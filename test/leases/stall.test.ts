// A leased slice's settle on a stalled connection, on Redis and PostgreSQL: the bytes are held past the
// settle's deadline, then delivered, so the store applies the settle after its caller gave up. The
// credits it charged are counted as charged (never as `uncharged`), and the ledger has one entry.
import { LeasedCreditLedger } from 'keygate';
import { PostgresCreditLedger } from 'keygate/postgres';
import { RedisCreditLedger } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { type BackendKind, openBackend } from './support/backends.js';

const postgres = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The backend's shared ledger reached through `proxy`, with a deadline of `timeoutMs`. */
async function throughProxy(kind: BackendKind, proxy: TcpProxy, ns: string, timeoutMs: number) {
  const url = new URL(kind === 'redis' ? REDIS_URL : PG_URL);
  url.port = String(await proxy.resume());
  if (kind === 'redis') {
    const client = createClient({ url: url.href, socket: { reconnectStrategy: () => 100 } });
    client.on('error', () => {});
    await client.connect();
    cleanups.push(async () => client.destroy());
    return new RedisCreditLedger({ client, prefix: `${ns}cr:`, timeoutMs });
  }
  const pool = new pg.Pool({ connectionString: url.href, max: 4 });
  pool.on('error', () => {});
  cleanups.push(() => pool.end());
  return new PostgresCreditLedger({ client: pool, schema: ns, timeoutMs });
}

/** Removes what the test wrote: the PostgreSQL schema, or the Redis keys under the prefix. */
async function drop(kind: BackendKind, ns: string): Promise<void> {
  if (kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: PG_URL });
    await pool.query(`DROP SCHEMA IF EXISTS "${ns}" CASCADE`);
    return pool.end();
  }
  const client = await createClient({ url: REDIS_URL }).connect();
  for await (const keys of client.scanIterator({ MATCH: `${ns}*` })) if (keys.length) await client.del(keys);
  client.destroy();
}

const backends = [
  { name: 'Redis', kind: 'redis' as BackendKind, available: redis, port: 6379, ns: `keygate:test:${RUN_ID}:stall:` },
  {
    name: 'PostgreSQL',
    kind: 'postgres' as BackendKind,
    available: postgres,
    port: 5432,
    ns: `keygate_stall${RUN_ID}`,
  },
].filter((b) => b.available);

describe.skipIf(backends.length === 0).each(backends)('a leased slice settle on a stalled connection: $name', (b) => {
  it('is counted as charged once the stalled settle is applied: uncharged 0, one charge entry of what was spent, reconcile() ok', async () => {
    const shared = await openBackend(b.kind, b.kind === 'redis' ? REDIS_URL : PG_URL, b.ns);
    cleanups.push(() => drop(b.kind, b.ns));
    cleanups.push(() => shared.end());
    await shared.migrate();
    const proxy = new TcpProxy('127.0.0.1', b.port);
    cleanups.push(() => proxy.cut());
    const inner = await throughProxy(b.kind, proxy, b.ns, 300);
    const ledger = new LeasedCreditLedger({ ledger: inner, maxSlice: 100, sliceTtlMs: 4_000, timeoutMs: 600 });
    const accountId = `acct_stall_${RUN_ID}`;
    await shared.ledger.topUp(accountId, 1_000);
    for (let i = 0; i < 10; i++) {
      const held = await ledger.hold(accountId, 1, { keyId: 'key_1' });
      if (!held.ok) throw new Error('refused');
      await ledger.settle(held.holdId);
    }

    // Every byte is held: the slice's settle (close() sends it) times out, and is tried again.
    proxy.stall();
    const closing = ledger.close();
    await sleep(1_000);
    proxy.unstall();
    await closing;

    expect(ledger.uncharged).toBe(0);
    expect(ledger.unresolved).toBe(0);
    const charges = (await shared.ledger.entries(accountId)).filter((e) => e.kind === 'charge');
    expect(charges.map((e) => [e.keyId, e.amount])).toEqual([['key_1', -10]]);
    expect(await shared.ledger.reconcile(accountId)).toMatchObject({ balance: 990, held: 0, ok: true });
  }, 30_000);
});
