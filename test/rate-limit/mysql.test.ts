import { capabilityOf, RateLimiterUnavailableError } from 'keygate';
import { MysqlRateLimiter } from 'keygate/mysql';
import { describeRateLimiterContract } from 'keygate/testing';
import type mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  MYSQL_URL,
  mysqlAvailable,
  openTestDatabase,
  type TestDatabase,
  throughPort,
} from '../stores/support/mysql.js';
import { TcpProxy } from '../stores/support/tcp-proxy.js';
import { rejectedWith, settlesAt } from './support/deadline.js';
import { freshKey } from './support/fresh-key.js';
import { pollUntil } from './support/poll.js';
import { rejection } from './support/rejection.js';

const available = await mysqlAvailable();
let db: TestDatabase;
let shared: mysql.Pool;
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  if (!available) return;
  db = await openTestDatabase('rl');
  shared = db.pool();
  await new MysqlRateLimiter({ client: shared }).migrate();
});
afterAll(async () => {
  for (const proxy of proxies) await proxy.cut();
  await db?.drop();
});

describe('MysqlRateLimiter without a server', () => {
  it('rejects at its timeout when the database never answers, and absorbs the late failure', async () => {
    let fail: (err: Error) => void = () => {};
    // A mysql2 pool whose queries never settle (until the test fails them, after the deadline).
    const stuck = {
      pool: {},
      query: () => new Promise(() => {}),
      getConnection: () => new Promise((_, reject) => (fail = reject)),
    } as unknown as mysql.Pool;
    const limiter = new MysqlRateLimiter({ client: stuck, timeoutMs: 50 });
    const err = rejectedWith(await settlesAt(50, () => limiter.consume('key_1', { limit: 1, windowMs: 1000 }, 1)));
    expect(err).toMatchObject({ code: 'rate_limiter_unavailable' });
    expect(String((err.cause as Error).message)).toMatch(/timed out after 50 ms/);
    fail(new Error('connection reset'));
    await new Promise((r) => setTimeout(r, 20));
  });

  it('waits 250 ms by default, and declares it as its deadline capability', () => {
    const limiter = new MysqlRateLimiter({ client: { pool: {}, query() {}, getConnection() {} } as never });
    expect(capabilityOf(limiter, 'deadline')?.timeoutMs).toBe(250);
  });

  it.each([
    ['client', { client: {} }],
    ['client', { client: { query() {}, beginTransaction() {} } }],
    ['tablePrefix', { client: 'pool', tablePrefix: 'Rate-Limits' }],
    ['timeoutMs', { client: 'pool', timeoutMs: -1 }],
  ])('refuses a bad %s option at construction', (field, options) => {
    const pool = { pool: {}, query() {}, getConnection() {} };
    const withPool = options.client === 'pool' ? { ...options, client: pool } : options;
    expect(() => new MysqlRateLimiter(withPool as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});

describe.skipIf(!available)('MysqlRateLimiter over MariaDB', () => {
  describeRateLimiterContract(
    'MysqlRateLimiter over a mysql2 pool',
    async () => ({ limiter: new MysqlRateLimiter({ client: shared, timeoutMs: 10_000 }) }),
    { describe, it, expect, beforeEach, afterEach },
  );

  it('migrates idempotently, also when several instances migrate at once', async () => {
    const p = db.pool();
    const limiters = Array.from({ length: 4 }, () => new MysqlRateLimiter({ client: p, tablePrefix: 'm_' }));
    await Promise.all(limiters.map((l) => l.migrate()));
    await limiters[0]!.migrate();
    expect(await limiters[1]!.consume('key_1', { limit: 1, windowMs: 1000 }, 1)).toMatchObject({ allowed: true });
  });

  it('keeps one row per key, and prune() deletes the rows of ended windows only', async () => {
    const limiter = new MysqlRateLimiter({ client: shared });
    const [short, long] = [freshKey('short'), freshKey('long')];
    await limiter.consume(short, { limit: 3, windowMs: 50 }, 1);
    await limiter.consume(short, { limit: 3, windowMs: 50 }, 1);
    await limiter.consume(long, { limit: 3, windowMs: 60_000 }, 1);
    const rows = async (id: string) => {
      const [found] = await shared.query('SELECT count(*) AS n FROM keygate_rate_limits WHERE key_id = ?', [id]);
      return Number((found as { n: number }[])[0]?.n);
    };
    expect(await rows(short)).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(await limiter.prune()).toBeGreaterThanOrEqual(1);
    expect(await rows(short)).toBe(0);
    expect(await rows(long)).toBe(1);
  });

  it('rejects with rate_limiter_unavailable once its pool has ended', async () => {
    const p = db.pool();
    const limiter = new MysqlRateLimiter({ client: p });
    await p.end();
    const err = await rejection(limiter.consume(freshKey(), { limit: 1, windowMs: 1000 }, 1));
    expect(err).toMatchObject({ code: 'rate_limiter_unavailable' });
    expect(err).toBeInstanceOf(RateLimiterUnavailableError);
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('rejects with rate_limiter_unavailable while the connection is cut, and recovers', async () => {
    const { hostname, port } = new URL(MYSQL_URL);
    const proxy = new TcpProxy(hostname, Number(port || 3306));
    proxies.push(proxy);
    const client = db.pool({ url: throughPort(db.url, await proxy.resume()), connectTimeout: 1000 });
    const limiter = new MysqlRateLimiter({ client, timeoutMs: 500 });
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
});
