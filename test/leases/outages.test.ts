// A leased limit through a store outage: processes (each a LeasedRateLimiter with a client of its
// own) keep serving one key while the relay to the store stalls or cuts every connection for 1.75 s;
// afterwards they spend the key until the first refusal, and the units of the window still unspent
// then are what the early-refusal bound allows (docs/guide/rate-limits.md, "Outages"). Takes that
// time out and are applied later must be given back; answers lost with their connection may strand
// one slice per process, plus a unit per request that failed.
import { Redis as IoRedis } from 'ioredis';
import { LeasedRateLimiter } from 'keygate';
import { PostgresRateLimiter } from 'keygate/postgres';
import { fromIoredis, RedisRateLimiter } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const postgres = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const PREFIX = `keygate:test:${RUN_ID}:outage:`;
const SCHEMA = `keygate_outage${RUN_ID}`;

const PROCESSES = 3;
const MAX_SLICE = 50;
const OUTAGE_MS = 1_750;
// The window outlasts the test: every unit counted in it stays counted unless given back.
const policy = { limit: 1_200, windowMs: 120_000 };
// Without outages: a request of cost 1 is refused only when fewer than 1 + (P - 1) * (maxSlice - 1) are unspent.
const EARLY_REFUSAL = 1 + (PROCESSES - 1) * (MAX_SLICE - 1);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

/** P leased limiters over one store, each with its own client through one relay. */
interface Fleet {
  proxy: TcpProxy;
  limiters: LeasedRateLimiter[];
  /** Resolves once every client answers again and what the store answered late has been acted on. */
  settled(): Promise<void>;
  /** The units the store counts in the key's open window (read past the relay). */
  counted(keyId: string): Promise<number>;
}

async function relayTo(url: string, defaultPort: number): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(url);
  const proxy = new TcpProxy(target.hostname, Number(target.port || defaultPort));
  cleanups.push(() => proxy.cut());
  target.hostname = '127.0.0.1';
  target.port = String(await proxy.resume());
  return { proxy, url: target.toString() };
}

const leased = (limiter: RedisRateLimiter | PostgresRateLimiter) =>
  new LeasedRateLimiter({ limiter, maxSlice: MAX_SLICE, divisor: 8 });

// One client straight to Redis (not through a relay) reads the counters and cleans up.
const direct = createClient({ url: REDIS_URL });
async function redisCounted(keyId: string): Promise<number> {
  if (!direct.isOpen) {
    await direct.connect();
    cleanups.push(async () => {
      for await (const keys of direct.scanIterator({ MATCH: `${PREFIX}*` })) if (keys.length) await direct.del(keys);
      direct.destroy();
    });
  }
  return Number((await direct.get(`${PREFIX}${keyId}`)) ?? 0);
}

async function nodeRedisFleet(): Promise<Fleet> {
  const relay = await relayTo(REDIS_URL, 6379);
  const clients = await Promise.all(
    Array.from({ length: PROCESSES }, async () => {
      const client = createClient({ url: relay.url, socket: { reconnectStrategy: () => 100 } });
      client.on('error', () => {});
      cleanups.push(async () => client.destroy());
      return client.connect();
    }),
  );
  return {
    proxy: relay.proxy,
    limiters: clients.map((client) => leased(new RedisRateLimiter({ client, prefix: PREFIX, timeoutMs: 250 }))),
    // One connection answers in order: a late reply's give-back is sent before the next PING's reply
    // is read, so the third PING answers after it was applied.
    settled: async () => {
      for (let i = 0; i < 3; i++) await Promise.all(clients.map((c) => c.ping()));
    },
    counted: redisCounted,
  };
}

async function ioredisFleet(): Promise<Fleet> {
  const relay = await relayTo(REDIS_URL, 6379);
  const clients = Array.from({ length: PROCESSES }, () => {
    const client = new IoRedis(relay.url, { retryStrategy: () => 100 });
    client.on('error', () => {});
    cleanups.push(async () => client.disconnect());
    return client;
  });
  return {
    proxy: relay.proxy,
    limiters: clients.map((c) =>
      leased(new RedisRateLimiter({ client: fromIoredis(c), prefix: PREFIX, timeoutMs: 250 })),
    ),
    settled: async () => {
      for (let i = 0; i < 3; i++) await Promise.all(clients.map((c) => c.ping()));
    },
    counted: redisCounted,
  };
}

let migrated: Promise<pg.Pool> | undefined;
async function postgresFleet(): Promise<Fleet> {
  migrated ??= (async () => {
    const admin = new pg.Pool({ connectionString: PG_URL });
    await new PostgresRateLimiter({ client: admin, schema: SCHEMA }).migrate();
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
      await admin.end();
    });
    return admin;
  })();
  const admin = await migrated;
  const relay = await relayTo(PG_URL, 5432);
  const pools = Array.from({ length: PROCESSES }, () => {
    const pool = new pg.Pool({ connectionString: relay.url, max: 4, connectionTimeoutMillis: 1_000 });
    pool.on('error', () => {});
    cleanups.push(() => pool.end());
    return pool;
  });
  // Every connection open before the outage (one opened during it never gets past its handshake), so
  // that takes sent during it go out on connections of their own and reach the database.
  await Promise.all(pools.flatMap((pool) => Array.from({ length: 4 }, () => pool.query('SELECT pg_sleep(0.05)'))));
  const idle = () => pools.every((p) => p.waitingCount === 0 && p.idleCount === p.totalCount);
  return {
    proxy: relay.proxy,
    limiters: pools.map((client) => leased(new PostgresRateLimiter({ client, schema: SCHEMA, timeoutMs: 250 }))),
    // A pool answers on several connections, in no order: wait until each answers a query, then until
    // no query (a late answer's give-back) is in flight at two looks 50 ms apart.
    settled: async () => {
      for (const pool of pools) {
        while (
          !(await pool.query('SELECT 1').then(
            () => true,
            () => false,
          ))
        )
          await sleep(50);
      }
      for (let quiet = 0; quiet < 2; quiet = idle() ? quiet + 1 : 0) await sleep(50);
    },
    counted: async (keyId) => {
      const table = `"${SCHEMA}".keygate_rate_limits`;
      const { rows } = await admin.query(`SELECT used FROM ${table} WHERE key_id = $1 AND window_end > now()`, [keyId]);
      return Number(rows[0]?.used ?? 0);
    },
  };
}

/** What the fleet's requests got: units allowed, requests refused, requests that failed (cost 1 each). */
interface Tally {
  allowed: number;
  refused: number;
  failed: number;
}

async function request(limiter: LeasedRateLimiter, key: string, tally: Tally): Promise<boolean | undefined> {
  try {
    const { allowed } = await limiter.consume(key, policy, 1);
    if (allowed) tally.allowed++;
    else tally.refused++;
    return allowed;
  } catch {
    tally.failed++;
    return undefined;
  }
}

type Fault = 'stall' | 'cut' | 'answers lost';

/**
 * Each process serves the key a request at a time (with 10 ms between them) while `fault` lasts
 * `OUTAGE_MS`; then every process spends the key, in turn, until the first refusal. Returns the
 * units the outage stranded (counted by the store, neither allowed nor held by a process), the
 * window's units unspent at the first refusal, and the tally.
 */
async function throughOutage(fleet: Fleet, fault: Fault): Promise<{ stranded: number; unspent: number; tally: Tally }> {
  const key = `key_outage_${RUN_ID}_${fault.replace(' ', '_')}_${Math.random().toString(36).slice(2, 8)}`;
  const tally: Tally = { allowed: 0, refused: 0, failed: 0 };
  // Each process holds a slice before the outage.
  for (let i = 0; i < 20; i++) for (const limiter of fleet.limiters) await request(limiter, key, tally);
  let serving = true;
  const traffic = fleet.limiters.map(async (limiter) => {
    while (serving) {
      await request(limiter, key, tally);
      await sleep(10);
    }
  });
  await sleep(50);
  if (fault === 'stall') fleet.proxy.stall();
  else if (fault === 'answers lost') fleet.proxy.stall('replies');
  else await fleet.proxy.cut();
  await sleep(OUTAGE_MS);
  if (fault === 'stall') fleet.proxy.unstall();
  else {
    // 'answers lost': the requests held in the relay reached the store; their answers die with the cut.
    if (fault === 'answers lost') await fleet.proxy.cut();
    await fleet.proxy.resume();
  }
  await fleet.settled();
  serving = false;
  await Promise.all(traffic);
  await fleet.settled();
  expect(tally.failed, 'requests failed during the outage').toBeGreaterThan(0);
  await Promise.all(fleet.limiters.map((limiter) => limiter.idle()));
  const held = fleet.limiters.reduce((sum, limiter) => sum + limiter.held(key), 0);
  const stranded = (await fleet.counted(key)) - tally.allowed - held;
  for (let turn = 0; ; turn++) {
    const limiter = fleet.limiters[turn % PROCESSES] as LeasedRateLimiter;
    if ((await request(limiter, key, tally)) === false) {
      return { stranded, unspent: policy.limit - tally.allowed, tally };
    }
    expect(tally.allowed, 'a limit exceeded').toBeLessThanOrEqual(policy.limit);
  }
}

const stores = [
  { name: 'Redis (node-redis)', available: redis, open: nodeRedisFleet, faults: ['stall', 'cut', 'answers lost'] },
  { name: 'Redis (ioredis)', available: redis, open: ioredisFleet, faults: ['cut', 'answers lost'] },
  // A pool connects again only once the database is back, so a cut loses only the answers in flight:
  // 'answers lost' is that case with every connection busy.
  { name: 'PostgreSQL (pg Pool)', available: postgres, open: postgresFleet, faults: ['stall', 'answers lost'] },
] as const;

// What each fault may strand beyond the bound without outages: nothing when every answer comes (a
// stall that ends), one slice per process plus a unit per failed request when answers are lost.
const lostAtMost = (fault: Fault, tally: Tally) => (fault === 'stall' ? 0 : PROCESSES * MAX_SLICE + tally.failed);

describe.each(stores.filter((s) => s.available))('a leased limit through a store outage: $name', (store) => {
  it.each(store.faults.map((fault) => [fault]))(
    '%s: what the outage strands is within the early-refusal bound as the guide states it',
    async (fault) => {
      const { stranded, unspent, tally } = await throughOutage(await store.open(), fault);
      if (process.env.KEYGATE_OUTAGE_LOG) console.log(store.name, fault, { stranded, unspent, ...tally });
      expect(stranded).toBeLessThanOrEqual(lostAtMost(fault, tally));
      expect(unspent).toBeLessThanOrEqual(EARLY_REFUSAL + lostAtMost(fault, tally));
    },
    30_000,
  );
});
