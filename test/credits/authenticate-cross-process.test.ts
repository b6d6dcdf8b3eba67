// Billing through `authenticate` across processes: three processes, each with its own key store and
// its own connection to one shared ledger, answer 10 concurrent requests each of one live key whose
// account holds 10 credits. Exactly 10 are served and settled and 20 refused with 402, on PostgreSQL
// and on Redis, and the books reconcile.
import { join } from 'node:path';
import { type CreditEntry, type CreditLedger, KeyManager, MemoryKeyStore } from 'keygate';
import { PostgresCreditLedger } from 'keygate/postgres';
import { RedisCreditLedger } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from '../stores/support/child-process.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const pgUp = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redisUp = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const SCHEMA = `keygate_cla${RUN_ID}`;
const PREFIX = `keygate:test:${RUN_ID}:ca:`;

const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;

beforeAll(async () => {
  if (pgUp || redisUp) bundle = await bundleChild(join(import.meta.dirname, 'support/authenticate-child.ts'));
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
});

const sumOf = (entries: readonly CreditEntry[]) => entries.reduce((sum, e) => sum + e.amount, 0);

/** Runs the three children against `ledger` and returns every status they answered and the account. */
async function race(ledger: CreditLedger, backend: 'postgres' | 'redis', url: string, namespace: string) {
  const accountId = `acct_a${RUN_ID}`;
  const { secret } = await new KeyManager({ store: new MemoryKeyStore() }).create({
    accountId,
    name: 'shared',
    mode: 'live',
  });
  await ledger.topUp(accountId, 10, { reference: 'pay_1' });
  const args = { backend, url, namespace, accountId, secret, n: 10 };
  const children = Array.from({ length: 3 }, () => startChild(bundle!.file, args, cleanups));
  await Promise.all(children.map((c) => c.next('ready')));
  for (const c of children) c.send('go');
  const done = await Promise.all(children.map((c) => c.next('done')));
  return { accountId, statuses: done.flatMap((d) => d.statuses as string[]) };
}

function expectExactBilling(statuses: string[], entries: CreditEntry[]) {
  expect(statuses.filter((s) => s === 'settled')).toHaveLength(10);
  expect(statuses.filter((s) => s === 'insufficient_credits')).toHaveLength(20);
  expect(statuses).toHaveLength(30);
  const charges = entries.filter((e) => e.kind === 'charge');
  expect(charges).toHaveLength(10);
  // Each process imported the key under an id of its own; every charge names the one that held it.
  expect(charges.every((e) => e.amount === -1 && typeof e.keyId === 'string')).toBe(true);
}

describe.skipIf(!pgUp)('billing through authenticate across processes, on PostgreSQL', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: PG_URL });
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await pool.end();
  });

  it('3 processes x 10 concurrent requests of cost 1 against 10 credits: 10 served and settled, 20 refused 402, the books reconcile', async () => {
    const ledger = new PostgresCreditLedger({ client: pool, schema: SCHEMA, timeoutMs: 10_000 });
    await ledger.migrate();
    const { accountId, statuses } = await race(ledger, 'postgres', PG_URL, SCHEMA);
    const entries = await ledger.entries(accountId, { limit: 1_000 });
    expectExactBilling(statuses, entries);
    const { rows } = await pool.query(
      `SELECT coalesce(sum(amount), 0) AS open FROM "${SCHEMA}".keygate_credit_holds
        WHERE account_id = $1 AND state = 'open' AND expires_at > now()`,
      [accountId],
    );
    const balance = await ledger.balance(accountId);
    expect({ balance, open: Number(rows[0].open) }).toEqual({ balance: 0, open: 0 });
    expect(sumOf(entries)).toBe(balance + Number(rows[0].open));
  }, 60_000);
});

describe.skipIf(!redisUp)('billing through authenticate across processes, on Redis', () => {
  const open = () => createClient({ url: REDIS_URL }).connect();
  let client: Awaited<ReturnType<typeof open>>;
  beforeAll(async () => {
    client = await open();
  });
  afterAll(async () => {
    for await (const keys of client.scanIterator({ MATCH: `${PREFIX}*` })) if (keys.length) await client.del(keys);
    client.destroy();
  });

  it('3 processes x 10 concurrent requests of cost 1 against 10 credits: 10 served and settled, 20 refused 402, the books reconcile', async () => {
    const ledger = new RedisCreditLedger({ client, prefix: PREFIX, timeoutMs: 10_000 });
    const { accountId, statuses } = await race(ledger, 'redis', REDIS_URL, PREFIX);
    const entries = await ledger.entries(accountId, { limit: 1_000 });
    expectExactBilling(statuses, entries);
    const balance = await ledger.balance(accountId);
    expect(balance).toBe(0);
    // Every hold was settled (10 charge entries of 1), so none is open: entries = balance + 0.
    expect(sumOf(entries)).toBe(balance);
  }, 60_000);
});
