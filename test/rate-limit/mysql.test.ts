import { capabilityOf } from 'keygate';
import { MysqlRateLimiter } from 'keygate/mysql';
import { describeRateLimiterContract } from 'keygate/testing';
import type mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  MYSQL_URL,
  mysqlAvailable,
  openTestDatabase,
  stuckPool,
  type TestDatabase,
  throughPort,
} from '../stores/support/mysql.js';
import { TcpProxy } from '../support/tcp-proxy.js';

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
  let migrations = 0;
  describeRateLimiterContract(
    'MysqlRateLimiter over a mysql2 pool',
    async () => {
      const limiter = new MysqlRateLimiter({ client: shared, timeoutMs: 10_000 });
      return {
        limiter,
        rowsOf: async (keyId) => {
          const [found] = await shared.query('SELECT count(*) AS n FROM keygate_rate_limits WHERE key_id = ?', [keyId]);
          return Number((found as { n: number }[])[0]?.n);
        },
        prune: () => limiter.prune(),
        stalled: (timeoutMs) => {
          const { pool, unstick } = stuckPool();
          return { limiter: new MysqlRateLimiter({ client: pool, timeoutMs }), unstick };
        },
        ended: async () => {
          const p = db.pool();
          const ended = new MysqlRateLimiter({ client: p });
          await p.end();
          return ended;
        },
        unmigrated: async (count) => {
          const p = db.pool();
          const tablePrefix = `m${++migrations}_`;
          return { limiters: Array.from({ length: count }, () => new MysqlRateLimiter({ client: p, tablePrefix })) };
        },
        severable: async () => {
          const { hostname, port } = new URL(MYSQL_URL);
          const proxy = new TcpProxy(hostname, Number(port || 3306));
          proxies.push(proxy);
          const client = db.pool({ url: throughPort(db.url, await proxy.resume()), connectTimeout: 1000 });
          const severed = new MysqlRateLimiter({ client, timeoutMs: 500 });
          return { limiter: severed, cut: () => proxy.cut(), restore: async () => void (await proxy.resume()) };
        },
      };
    },
    { describe, it, expect, beforeEach, afterEach },
    { hooks: ['prune', 'stalled', 'ended', 'unmigrated', 'severable'] },
  );
});
