import { capabilityOf, RateLimiterUnavailableError } from 'keygate';
import { SqliteRateLimiter } from 'keygate/sqlite';
import { describeRateLimiterContract } from 'keygate/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reopenable, SqliteFiles } from '../stores/support/sqlite-files.js';
import { freshKey } from './support/fresh-key.js';
import { rejection } from './support/rejection.js';

const files = new SqliteFiles();
let path: string;
beforeAll(async () => {
  path = files.path();
  await new SqliteRateLimiter({ database: files.connect(path) }).migrate();
});
afterAll(() => files.removeAll());

describeRateLimiterContract(
  'SqliteRateLimiter over better-sqlite3 (a file)',
  async () => {
    const db = files.connect(path);
    const limiter = new SqliteRateLimiter({ database: db, timeoutMs: 10_000 });
    return {
      limiter,
      rowsOf: async (keyId) =>
        (db.prepare('SELECT count(*) AS n FROM keygate_rate_limits WHERE key_id = ?').get(keyId) as { n: number }).n,
      prune: () => limiter.prune(),
      ended: async () => {
        const conn = reopenable(files, path);
        const ended = new SqliteRateLimiter({ database: conn.driver });
        conn.close();
        return ended;
      },
    };
  },
  { describe, it, expect, beforeEach, afterEach },
  { hooks: ['prune', 'ended'] },
);

describe('SqliteRateLimiter', () => {
  it('counts exactly across two connections to one file, interleaved', async () => {
    const a = new SqliteRateLimiter({ database: files.connect(path) });
    const b = new SqliteRateLimiter({ database: files.connect(path) });
    const key = freshKey('two');
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).consume(key, { limit: 25, windowMs: 60_000 }, 1)),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(25);
    expect(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.remaining)
        .sort((x, y) => x - y),
    ).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('declares its timeoutMs (250 by default) as its deadline', () => {
    const limiter = new SqliteRateLimiter({ database: files.connect(path) });
    expect(limiter.timeoutMs).toBe(250);
    expect(capabilityOf(limiter, 'deadline')?.timeoutMs).toBe(250);
  });

  it('rejects with rate_limiter_unavailable (SQLITE_BUSY as cause) when another connection holds the write lock past timeoutMs', async () => {
    const limiter = new SqliteRateLimiter({ database: files.connect(path), timeoutMs: 50 });
    const holder = files.connect(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const err = await rejection(limiter.consume(freshKey('busy'), { limit: 1, windowMs: 1000 }, 1));
      expect(err).toBeInstanceOf(RateLimiterUnavailableError);
      expect(err.cause).toMatchObject({ code: 'SQLITE_BUSY' });
    } finally {
      holder.exec('ROLLBACK');
    }
  });
});
