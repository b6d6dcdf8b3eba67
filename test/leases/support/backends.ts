// The shared limiter and ledger of one backend, as a test or a child process opens them.
import type { CreditLedger, RateLimiter } from 'keygate';
import { MysqlCreditLedger, MysqlRateLimiter } from 'keygate/mysql';
import { PostgresCreditLedger, PostgresRateLimiter } from 'keygate/postgres';
import { RedisCreditLedger, RedisRateLimiter } from 'keygate/redis';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createClient } from 'redis';

export type BackendKind = 'redis' | 'postgres' | 'mysql';

export interface Opened {
  limiter: RateLimiter;
  ledger: CreditLedger;
  /** Creates the tables (PostgreSQL, MySQL). */
  migrate(): Promise<void>;
  end(): Promise<void>;
}

/** Opens `kind` at `url` in the namespace `ns` (a Redis prefix, a PostgreSQL schema, a MySQL database's table prefix). */
export async function openBackend(kind: BackendKind, url: string, ns: string): Promise<Opened> {
  const timeoutMs = 10_000;
  if (kind === 'redis') {
    const client = await createClient({ url }).connect();
    return {
      limiter: new RedisRateLimiter({ client, prefix: `${ns}rl:`, timeoutMs }),
      ledger: new RedisCreditLedger({ client, prefix: `${ns}cr:`, timeoutMs }),
      migrate: async () => {},
      end: async () => client.destroy(),
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
