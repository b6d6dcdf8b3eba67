// The shared limiter and ledger of one backend, as a test or a child process opens them.

import Database from 'better-sqlite3';
import type { CreditLedger, RateLimiter } from 'keygate';
import { MysqlCreditLedger, MysqlRateLimiter } from 'keygate/mysql';
import { PostgresCreditLedger, PostgresRateLimiter } from 'keygate/postgres';
import { fromNodeRedisCluster, RedisCreditLedger, RedisRateLimiter } from 'keygate/redis';
import { SqliteCreditLedger, SqliteRateLimiter } from 'keygate/sqlite';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createClient, createCluster } from 'redis';

export type BackendKind = 'redis' | 'redis-cluster' | 'postgres' | 'mysql' | 'sqlite';

export interface Opened {
  limiter: RateLimiter;
  ledger: CreditLedger;
  /** Creates the tables (PostgreSQL, MySQL). */
  migrate(): Promise<void>;
  end(): Promise<void>;
}

/**
 * Opens `kind` at `url` in the namespace `ns` (a Redis prefix, a PostgreSQL schema, a MySQL
 * database's table prefix; SQLite has a file of its own, Redis Cluster its masters' URLs joined by
 * commas, and both use `ns` as Redis does).
 */
export async function openBackend(kind: BackendKind, url: string, ns: string): Promise<Opened> {
  const timeoutMs = 10_000;
  if (kind === 'redis' || kind === 'redis-cluster') {
    const raw =
      kind === 'redis'
        ? await createClient({ url }).connect()
        : await createCluster({ rootNodes: url.split(',').map((u) => ({ url: u })) }).connect();
    const client = kind === 'redis' ? (raw as ReturnType<typeof createClient>) : fromNodeRedisCluster(raw as never);
    return {
      limiter: new RedisRateLimiter({ client, prefix: `${ns}rl:`, timeoutMs }),
      ledger: new RedisCreditLedger({ client, prefix: `${ns}cr:`, timeoutMs }),
      migrate: async () => {},
      end: async () => raw.destroy(),
    };
  }
  if (kind === 'sqlite') {
    // One connection per process, as an app opens the file; the write lock orders the processes.
    const database = new Database(url);
    const limiter = new SqliteRateLimiter({ database, timeoutMs });
    const ledger = new SqliteCreditLedger({ database, timeoutMs });
    return {
      limiter,
      ledger,
      migrate: async () => {
        await limiter.migrate();
        await ledger.migrate();
      },
      end: async () => {
        database.close();
      },
    };
  }
  if (kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: url, max: 5 });
    const limiter = new PostgresRateLimiter({ client: pool, schema: ns, timeoutMs });
    const ledger = new PostgresCreditLedger({ client: pool, schema: ns, timeoutMs });
    return {
      limiter,
      ledger,
      migrate: async () => {
        await limiter.migrate();
        await ledger.migrate();
      },
      end: () => pool.end(),
    };
  }
  const pool = mysql.createPool({ uri: url, connectionLimit: 5 });
  const limiter = new MysqlRateLimiter({ client: pool, tablePrefix: ns, timeoutMs });
  const ledger = new MysqlCreditLedger({ client: pool, tablePrefix: ns, timeoutMs });
  return {
    limiter,
    ledger,
    migrate: async () => {
      await limiter.migrate();
      await ledger.migrate();
    },
    end: () => pool.end(),
  };
}
