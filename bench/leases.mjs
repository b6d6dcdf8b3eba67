// Store round trips per request for a key far from its limit, and for a billed request of a funded
// account, with leased budgets (LeasedRateLimiter, LeasedCreditLedger) and without, on Redis,
// PostgreSQL and MariaDB/MySQL. Counted at the client: Redis, every command node-redis sends;
// PostgreSQL, every statement sent on a pooled connection (BEGIN and COMMIT included); MySQL, every
// statement sent through the pool or a checked-out connection (START TRANSACTION and COMMIT
// included). Requests run `concurrency` at a time after one warm-up request; the leased wrappers'
// close() is counted too. A store that does not answer is reported as skipped.
//
//   node bench/leases.mjs [--requests 2000] [--concurrency 1,16] [--json bench/LEASES.json]
// `npm run bench` runs the same through `runLeases`.
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { countStatements } from './count-statements.mjs';

const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MYSQL_URL = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

const { LeasedCreditLedger, LeasedRateLimiter } = await import('keygate');

async function openRedis() {
  const { createClient } = await import('redis');
  const { RedisCreditLedger, RedisRateLimiter } = await import('keygate/redis');
  const client = await createClient({ url: REDIS_URL }).connect();
  const counter = { count: 0 };
  const counted = {
    sendCommand: (args) => {
      counter.count++;
      return client.sendCommand(args);
    },
  };
  const prefix = `keygate:bench:leases:${process.pid}:`;
  return {
    counter,
    limiter: new RedisRateLimiter({ client: counted, prefix: `${prefix}rl:`, timeoutMs: 10_000 }),
    ledger: new RedisCreditLedger({ client: counted, prefix: `${prefix}cr:`, timeoutMs: 10_000 }),
    end: async () => {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(keys);
      await client.quit();
    },
  };
}

async function openPostgres() {
  const pg = (await import('pg')).default;
  const { PostgresCreditLedger, PostgresRateLimiter } = await import('keygate/postgres');
  const pool = new pg.Pool({ connectionString: PG_URL, max: 8 });
  const counter = { count: 0 };
  countStatements(pool, counter, 'count');
  const schema = `keygate_bench_leases_${process.pid}`;
  const limiter = new PostgresRateLimiter({ client: pool, schema, timeoutMs: 10_000 });
  const ledger = new PostgresCreditLedger({ client: pool, schema, timeoutMs: 10_000 });
  await limiter.migrate();
  await ledger.migrate();
  return {
    counter,
    limiter,
    ledger,
    end: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    },
  };
}

async function openMysql() {
  const mysql = (await import('mysql2/promise')).default;
  const { MysqlCreditLedger, MysqlRateLimiter } = await import('keygate/mysql');
  const database = `keygate_bench_leases_${process.pid}`;
  const admin = await mysql.createConnection({ uri: MYSQL_URL });
  await admin.query(`CREATE DATABASE \`${database}\``);
  const url = new URL(MYSQL_URL);
  url.pathname = `/${database}`;
  const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 8 });
  const counter = { count: 0 };
  const query = pool.query.bind(pool);
  pool.query = (...a) => {
    counter.count++;
    return query(...a);
  };
  const getConnection = pool.getConnection.bind(pool);
  pool.getConnection = async () => {
    const conn = await getConnection();
    if (!conn.__counted) {
      conn.__counted = true;
      const q = conn.query.bind(conn);
      conn.query = (...a) => {
        counter.count++;
        return q(...a);
      };
    }
    return conn;
  };
  const limiter = new MysqlRateLimiter({ client: pool, timeoutMs: 10_000 });
  const ledger = new MysqlCreditLedger({ client: pool, timeoutMs: 10_000 });
  await limiter.migrate();
  await ledger.migrate();
  return {
    counter,
    limiter,
    ledger,
    end: async () => {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    },
  };
}

async function inParallel(n, concurrency, one) {
  let next = 0;
  const lane = async () => {
    while (next < n) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

let serial = 0;
async function limits(store, leased, concurrency, requests) {
  const limiter = leased ? new LeasedRateLimiter({ limiter: store.limiter }) : store.limiter;
  const key = `key_bench_${++serial}`;
  const policy = { limit: 1e12, windowMs: 3_600_000 };
  const one = async () => {
    if (!(await limiter.consume(key, policy, 1)).allowed) throw new Error('bench: refused far from the limit');
  };
  await one();
  const start = store.counter.count;
  await inParallel(requests, concurrency, one);
  if (leased) await limiter.close();
  return (store.counter.count - start) / requests;
}

async function credits(store, leased, concurrency, requests) {
  const ledger = leased ? new LeasedCreditLedger({ ledger: store.ledger }) : store.ledger;
  const account = `acct_bench_${++serial}`;
  await store.ledger.topUp(account, 1e12);
  const one = async () => {
    const held = await ledger.hold(account, 1, { keyId: 'key_bench' });
    if (!held.ok) throw new Error('bench: the hold was refused');
    await ledger.settle(held.holdId);
  };
  await one();
  const start = store.counter.count;
  await inParallel(requests, concurrency, one);
  if (leased) await ledger.close();
  const perRequest = (store.counter.count - start) / requests;
  const r = await store.ledger.reconcile(account);
  if (!r.ok || r.held !== 0) throw new Error(`bench: the ledger does not reconcile: ${JSON.stringify(r)}`);
  return perRequest;
}

/**
 * Store round trips per request, plain and leased, for limits and credits on Redis, PostgreSQL and
 * MariaDB/MySQL: `{ requests, results: { redis|postgres|mysql: { [concurrency]: { limits,
 * leasedLimits, credits, leasedCredits } } | { skipped } } }`.
 */
export async function runLeases({ requests = 2000, concurrency = [1, 16], log = (line) => console.log(line) } = {}) {
  const out = { requests, results: {} };
  for (const [name, open] of [
    ['redis', openRedis],
    ['postgres', openPostgres],
    ['mysql', openMysql],
  ]) {
    let store;
    try {
      store = await open();
    } catch (err) {
      out.results[name] = { skipped: String(err?.message ?? err) };
      log(`${name}: skipped (${out.results[name].skipped})`);
      continue;
    }
    try {
      const rows = {};
      for (const c of concurrency) {
        rows[c] = {
          limits: await limits(store, false, c, requests),
          leasedLimits: await limits(store, true, c, requests),
          credits: await credits(store, false, c, requests),
          leasedCredits: await credits(store, true, c, requests),
        };
        const r = rows[c];
        log(
          `${name} x${c}: limits ${r.limits.toFixed(3)} -> leased ${r.leasedLimits.toFixed(3)}; ` +
            `credits ${r.credits.toFixed(3)} -> leased ${r.leasedCredits.toFixed(3)} round trips per request`,
        );
      }
      out.results[name] = rows;
    } finally {
      await store.end();
    }
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  const flag = (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
  const out = await runLeases({
    requests: Number(flag('requests', '2000')),
    concurrency: flag('concurrency', '1,16').split(',').map(Number),
  });
  const json = flag('json', undefined);
  if (json) await writeFile(json, `${JSON.stringify(out, null, 2)}\n`);
}
