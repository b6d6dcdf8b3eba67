import { PGlite } from '@electric-sql/pglite';
import { RateLimiterUnavailableError } from 'keygate';
import { PostgresRateLimiter } from 'keygate/postgres';
import { describeRateLimiterContract } from 'keygate/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { TcpProxy } from '../stores/support/tcp-proxy.js';
import { rejectedWith, settlesAt } from './support/deadline.js';
import { freshKey } from './support/fresh-key.js';
import { pollUntil } from './support/poll.js';
import { rejection } from './support/rejection.js';

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
  }),
  { describe, it, expect, beforeEach, afterEach },
);

describe('PostgresRateLimiter over PGlite', () => {
  it('rejects at its timeout when the database never answers, and absorbs the late failure', async () => {
    let fail: (err: Error) => void = () => {};
    // A pg Pool whose queries never settle (until the test fails them, after the deadline).
    const stuck = {
      totalCount: 0,
      connect: () => new Promise(() => {}),
      query: () => new Promise((_, reject) => (fail = reject)),
    } as unknown as pg.Pool;
    const limiter = new PostgresRateLimiter({ client: stuck, timeoutMs: 50 });
    // Fake timers: still pending at 49 ms, rejected by 51 ms, whatever the machine's speed.
    const err = rejectedWith(await settlesAt(50, () => limiter.consume('key_1', { limit: 1, windowMs: 1000 }, 1)));
    expect(err).toMatchObject({ code: 'rate_limiter_unavailable' });
    expect(String((err.cause as Error).message)).toMatch(/timed out after 50 ms/);
    fail(new Error('connection reset'));
    await new Promise((r) => setTimeout(r, 20));
  });

  it('rejects with rate_limiter_unavailable once the database is closed', async () => {
    const db = await PGlite.create();
    const limiter = new PostgresRateLimiter({ client: db });
    await limiter.migrate();
    await limiter.consume('key_1', { limit: 1, windowMs: 1000 }, 1);
    await db.close();
    const err = await rejection(limiter.consume('key_1', { limit: 1, windowMs: 1000 }, 1));
    expect(err).toBeInstanceOf(RateLimiterUnavailableError);
    expect(err.cause).toBeInstanceOf(Error);
  });
});

describe.skipIf(!available)('PostgresRateLimiter over pg', () => {
  // One pool for the contract's tests: the server's connections are shared with every other test run.
  let shared: pg.Pool | undefined;
  beforeAll(async () => {
    shared = pool();
    await new PostgresRateLimiter({ client: shared, schema: SCHEMA }).migrate();
  });
  describeRateLimiterContract(
    'PostgresRateLimiter over a pg Pool',
    async () => ({
      limiter: new PostgresRateLimiter({ client: shared as pg.Pool, schema: SCHEMA, timeoutMs: 10_000 }),
    }),
    { describe, it, expect, beforeEach, afterEach },
  );

  it('migrates idempotently, also when several instances migrate at once', async () => {
    const schema = `${SCHEMA}_m`;
    const p = pool();
    try {
      const limiters = Array.from({ length: 4 }, () => new PostgresRateLimiter({ client: p, schema }));
      await Promise.all(limiters.map((l) => l.migrate()));
      await limiters[0]!.migrate();
      expect(await limiters[1]!.consume('key_1', { limit: 1, windowMs: 1000 }, 1)).toMatchObject({ allowed: true });
    } finally {
      await p.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  it('sends one statement per request', async () => {
    const p = pool();
    const limiter = new PostgresRateLimiter({ client: p, schema: SCHEMA });
    await limiter.migrate();
    const spy = vi.spyOn(p, 'query');
    for (let i = 0; i < 5; i++) await limiter.consume(freshKey('trips'), { limit: 3, windowMs: 60_000 }, 1);
    expect(spy).toHaveBeenCalledTimes(5);
    spy.mockRestore();
  });

  it('keeps one row per key, and prune() deletes the rows of ended windows only', async () => {
    const p = pool();
    const limiter = new PostgresRateLimiter({ client: p, schema: SCHEMA });
    await limiter.migrate();
    const [short, long] = [freshKey('short'), freshKey('long')];
    await limiter.consume(short, { limit: 3, windowMs: 50 }, 1);
    await limiter.consume(short, { limit: 3, windowMs: 50 }, 1);
    await limiter.consume(long, { limit: 3, windowMs: 60_000 }, 1);
    const rows = async (id: string) =>
      Number(
        (await p.query(`SELECT count(*) AS n FROM "${SCHEMA}".keygate_rate_limits WHERE key_id = $1`, [id])).rows[0].n,
      );
    expect(await rows(short)).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(await limiter.prune()).toBeGreaterThanOrEqual(1);
    expect(await rows(short)).toBe(0);
    expect(await rows(long)).toBe(1);
  });

  it('rejects with rate_limiter_unavailable once its pool has ended', async () => {
    const p = pool();
    const limiter = new PostgresRateLimiter({ client: p, schema: SCHEMA });
    await limiter.migrate();
    await p.end();
    const err = await rejection(limiter.consume(freshKey(), { limit: 1, windowMs: 1000 }, 1));
    expect(err).toMatchObject({ code: 'rate_limiter_unavailable' });
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('rejects with rate_limiter_unavailable while the connection is cut, and recovers', async () => {
    const { hostname, port } = new URL(PG_URL);
    const proxy = new TcpProxy(hostname, Number(port || 5432));
    proxies.push(proxy);
    const url = new URL(PG_URL);
    url.hostname = '127.0.0.1';
    url.port = String(await proxy.resume());
    const limiter = new PostgresRateLimiter({ client: pool(url.toString(), 1000), schema: SCHEMA, timeoutMs: 500 });
    await limiter.migrate();
    const key = freshKey('cut');
    await limiter.consume(key, { limit: 5, windowMs: 60_000 }, 1);
    await proxy.cut();
    expect(await rejection(limiter.consume(key, { limit: 5, windowMs: 60_000 }, 1))).toMatchObject({
      code: 'rate_limiter_unavailable',
    });
    await proxy.resume();
    const answer = await pollUntil(() =>
      limiter.consume(key, { limit: 5, windowMs: 60_000 }, 0).catch(() => undefined),
    );
    expect(answer?.remaining).toBeLessThanOrEqual(4);
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
