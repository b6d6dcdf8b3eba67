// Round trips a billed request sends to a shared credit ledger (check row 10): one hold before the
// handler and one settle after it, counted at the client. PostgreSQL: every statement sent, through
// the pool or a checked-out connection (BEGIN and COMMIT included). Redis: every command node-redis
// sends. Measured after one warm-up request (which loads the Lua scripts), over `requests` requests.
// A store that does not answer is reported as skipped, with the reason.

import { countStatements } from './count-statements.mjs';

const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ACCOUNT = 'acct_bench';

// One billed request's ledger calls, as an adapter makes them: hold, then settle (the handler answered < 500).
async function billedRequests(ledger, counter, requests) {
  await ledger.topUp(ACCOUNT, 1e12);
  const once = async () => {
    const held = await ledger.hold(ACCOUNT, 1, { keyId: 'key_bench' });
    if (!held.ok) throw new Error('bench: the hold was refused');
    const holdStart = counter.count;
    await ledger.settle(held.holdId);
    return counter.count - holdStart;
  };
  await once(); // warm-up: connections opened, scripts loaded
  const start = counter.count;
  let settles = 0;
  for (let i = 0; i < requests; i++) settles += await once();
  const total = counter.count - start;
  return { perRequest: total / requests, perHold: (total - settles) / requests, perSettle: settles / requests };
}

async function postgres(requests) {
  const pg = (await import('pg')).default;
  const { PostgresCreditLedger } = await import('keygate/postgres');
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  // Every statement goes through a pooled connection's `query` (pg's own `pool.query` checks one out
  // with a callback; the ledger's transactions with a promise): count there, once per statement.
  const counter = { count: 0 };
  countStatements(pool, counter, 'count');
  const schema = `keygate_bench_credits_${process.pid}`;
  try {
    const ledger = new PostgresCreditLedger({ client: pool, schema, timeoutMs: 10_000 });
    await ledger.migrate();
    return await billedRequests(ledger, counter, requests);
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  }
}

async function redis(requests) {
  const { createClient } = await import('redis');
  const { RedisCreditLedger } = await import('keygate/redis');
  const client = await createClient({ url: REDIS_URL }).connect();
  const counter = { count: 0 };
  const counted = {
    sendCommand: (args) => {
      counter.count++;
      return client.sendCommand(args);
    },
  };
  const prefix = `keygate:bench:credits:${process.pid}:`;
  try {
    const ledger = new RedisCreditLedger({ client: counted, prefix, timeoutMs: 10_000 });
    return await billedRequests(ledger, counter, requests);
  } finally {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
    await client.quit();
  }
}

/**
 * Round trips per billed request (hold + settle) on PostgreSQL and Redis: `{ postgres, redis }`, each
 * `{ perRequest, perHold, perSettle }` or `{ skipped }` with the reason the store could not be used.
 */
export async function runCreditTrips({ requests = 200, log = () => {} } = {}) {
  const out = {};
  for (const [name, run] of [
    ['postgres', postgres],
    ['redis', redis],
  ]) {
    try {
      out[name] = await run(requests);
      log(`credits round trips on ${name}: ${out[name].perRequest} per billed request`);
    } catch (err) {
      out[name] = { skipped: String(err?.message ?? err) };
      log(`credits round trips on ${name}: skipped (${out[name].skipped})`);
    }
  }
  return out;
}
