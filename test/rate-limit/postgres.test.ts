import { PGlite } from '@electric-sql/pglite';
import { PostgresRateLimiter } from 'keygate/postgres';
import { describeRateLimiterContract } from 'keygate/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { freshKey } from './support/fresh-key.js';

const available = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const SCHEMA = `keygate_rl${RUN_ID}`;
const pools: pg.Pool[] = [];
const proxies: TcpProxy[] = [];

function pool(connectionString = PG_URL, connectionTimeoutMillis = 10_000): pg.Pool {
  const p = new pg.Pool({ connectionString, max: 10, connectionTimeoutMillis });
  // An idle connection the server (or the test's proxy) drops is reported here; the pool replaces it.
  p.on('error', () => {});
  pools.push(p);
  return p;
}

// PGlite takes about a second to start: one in-memory database for the file, a schema per use.
let pglite: Promise<PGlite> | undefined;
const embedded = () => {
  pglite ??= PGlite.create();
  return pglite;
};
// Started (and migrated) in a hook, whose time limit allows for a slow start on a busy machine.
beforeAll(async () => {
  await new PostgresRateLimiter({ client: await embedded(), schema: 'rate_limits' }).migrate();
});

afterAll(async () => {
  for (const proxy of proxies) await proxy.cut();
  if (pglite) await (await pglite).close();
  if (!available) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
  await Promise.all(pools.filter((p) => !p.ended).map((p) => p.end()));
});

describeRateLimiterContract(
  'PostgresRateLimiter over PGlite',
  async () => ({
    limiter: new PostgresRateLimiter({ client: await embedded(), schema: 'rate_limits', timeoutMs: 10_000 }),
    stalled: (timeoutMs) => {
      let fail: (err: Error) => void = () => {};
      // A pg Pool whose queries never settle (until the test fails them, after the deadline).
      const stuck = {
        totalCount: 0,
        connect: () => new Promise(() => {}),
        query: () => new Promise((_, reject) => (fail = reject)),
      } as unknown as pg.Pool;
      return { limiter: new PostgresRateLimiter({ client: stuck, timeoutMs }), unstick: (err) => fail(err) };
    },
    ended: async () => {
      const db = await PGlite.create();
      const limiter = new PostgresRateLimiter({ client: db });
      await limiter.migrate();
      await limiter.consume('key_1', { limit: 1, windowMs: 1000 }, 1);
      await db.close();
      return limiter;
    },
  }),
  { describe, it, expect, beforeEach, afterEach },
  { hooks: ['stalled', 'ended'] },
);

describe.skipIf(!available)('PostgresRateLimiter over pg', () => {
  // One pool for the contract's tests: the server's connections are shared with every other test run.
  let shared: pg.Pool | undefined;
  beforeAll(async () => {
    shared = pool();
    await new PostgresRateLimiter({ client: shared, schema: SCHEMA }).migrate();
  });
  let migrations = 0;
  describeRateLimiterContract(
    'PostgresRateLimiter over a pg Pool',
    async () => {
      const limiter = new PostgresRateLimiter({ client: shared as pg.Pool, schema: SCHEMA, timeoutMs: 10_000 });
      return {
        limiter,
        rowsOf: async (keyId) =>
          Number(
            (
              await shared!.query(`SELECT count(*) AS n FROM "${SCHEMA}".keygate_rate_limits WHERE key_id = $1`, [
                keyId,
              ])
            ).rows[0].n,
          ),
        prune: () => limiter.prune(),
        ended: async () => {
          const p = pool();
          const ended = new PostgresRateLimiter({ client: p, schema: SCHEMA });
          await ended.migrate();
          await p.end();
          return ended;
        },
        unmigrated: async (count) => {
          const schema = `${SCHEMA}_m${++migrations}`;
          const p = pool();
          const limiters = Array.from({ length: count }, () => new PostgresRateLimiter({ client: p, schema }));
          return { limiters, drop: async () => void (await p.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)) };
        },
        severable: async () => {
          const { hostname, port } = new URL(PG_URL);
          const proxy = new TcpProxy(hostname, Number(port || 5432));
          proxies.push(proxy);
          const url = new URL(PG_URL);
          url.hostname = '127.0.0.1';
          url.port = String(await proxy.resume());
          const client = pool(url.toString(), 1000);
          const severed = new PostgresRateLimiter({ client, schema: SCHEMA, timeoutMs: 500 });
          return { limiter: severed, cut: () => proxy.cut(), restore: async () => void (await proxy.resume()) };
        },
      };
    },
    { describe, it, expect, beforeEach, afterEach },
    { hooks: ['prune', 'ended', 'unmigrated', 'severable'] },
  );

  it('sends one statement per request', async () => {
    const p = pool();
    const limiter = new PostgresRateLimiter({ client: p, schema: SCHEMA });
    await limiter.migrate();
    const spy = vi.spyOn(p, 'query');
    for (let i = 0; i < 5; i++) await limiter.consume(freshKey('trips'), { limit: 3, windowMs: 60_000 }, 1);
    expect(spy).toHaveBeenCalledTimes(5);
    spy.mockRestore();
  });

  it.each([
    ['client', { client: {} }],
    ['schema', { client: 'pool', schema: 'Rate-Limits' }],
    ['timeoutMs', { client: 'pool', timeoutMs: -1 }],
  ])('refuses a bad %s option at construction', (field, options) => {
    const withPool = options.client === 'pool' ? { ...options, client: pool() } : options;
    expect(() => new PostgresRateLimiter(withPool as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});
