// A shared ledger's settle retried after its first attempt timed out on a stalled connection, on Redis
// and PostgreSQL: the retry waits for the first attempt's answer instead of sending a second settle, so
// it learns what the ledger did (`charged: 3`), not the idempotent `charged: 0` of a hold already closed.
import { CreditLedgerUnavailableError } from 'keygate';
import { PostgresCreditLedger } from 'keygate/postgres';
import { RedisCreditLedger } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const postgres = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function redisLedger(proxy: TcpProxy) {
  const prefix = `keygate:test:${RUN_ID}:retried:`;
  const client = createClient({
    url: `redis://127.0.0.1:${await proxy.resume()}`,
    socket: { reconnectStrategy: () => 100 },
  });
  client.on('error', () => {});
  await client.connect();
  cleanups.push(async () => {
    const direct = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of direct.scanIterator({ MATCH: `${prefix}*` })) if (keys.length) await direct.del(keys);
    direct.destroy();
    client.destroy();
  });
  return new RedisCreditLedger({ client, prefix, timeoutMs: 300 });
}

async function postgresLedger(proxy: TcpProxy) {
  const schema = `keygate_retried${RUN_ID}`;
  const url = new URL(PG_URL);
  url.port = String(await proxy.resume());
  const pool = new pg.Pool({ connectionString: url.href, max: 4 });
  pool.on('error', () => {});
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });
  const ledger = new PostgresCreditLedger({ client: pool, schema, timeoutMs: 300 });
  await ledger.migrate();
  return ledger;
}

const backends = [
  { name: 'Redis', available: redis, port: 6379, open: redisLedger },
  { name: 'PostgreSQL', available: postgres, port: 5432, open: postgresLedger },
].filter((b) => b.available);

describe.skipIf(backends.length === 0).each(backends)('a settle retried while the first is unanswered: $name', (b) => {
  it('answers what the first attempt did: the hold charged once, and the retry says so', async () => {
    const proxy = new TcpProxy('127.0.0.1', b.port);
    cleanups.push(() => proxy.cut());
    const ledger = await b.open(proxy);
    const accountId = `acct_retried_${RUN_ID}`;
    await ledger.topUp(accountId, 100);
    const held = await ledger.hold(accountId, 3, { keyId: 'key_1' });
    if (!held.ok) throw new Error('refused');

    proxy.stall();
    await expect(ledger.settle(held.holdId)).rejects.toBeInstanceOf(CreditLedgerUnavailableError);
    const retried = ledger.settle(held.holdId);
    await sleep(50);
    proxy.unstall();
    expect(await retried).toEqual({ charged: 3, balance: 97 });

    // Once answered, a settle is sent again as usual: the hold is closed, so it charges nothing.
    expect(await ledger.settle(held.holdId)).toEqual({ charged: 0, balance: 97 });
    const charges = (await ledger.entries(accountId)).filter((e) => e.kind === 'charge');
    expect(charges.map((e) => e.amount)).toEqual([-3]);
    expect(await ledger.reconcile(accountId)).toMatchObject({ balance: 97, held: 0, ok: true });
  }, 30_000);
});
