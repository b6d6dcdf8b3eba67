// The parts of one soak process over one backend: the key store, the shared credit ledger and the
// shared rate limiter, on one pool (PostgreSQL) or one client (Redis) whose connections carry the
// run's name, so the figures count this run's connections and nobody else's.
import type { CreditLedger, RateLimiter } from 'keygate';
import { PostgresCreditLedger, PostgresKeyStore, PostgresRateLimiter } from 'keygate/postgres';
import { RedisCreditLedger, RedisKeyStore, RedisRateLimiter } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';

export type BackendName = 'postgres' | 'redis';

/** Where one store's soak keeps its data: its own schema, or its own prefix in its own Redis database. */
export interface Namespace {
  readonly backend: BackendName;
  /** Names the run's connections (`application_name`, `CLIENT SETNAME`): `keygate-soak-<run>`. */
  readonly run: string;
  readonly pgUrl: string;
  readonly schema: string;
  readonly redisUrl: string;
  readonly prefix: string;
}

/** The most connections one soak process's pool opens (its LISTEN connection included). */
export const PG_POOL_MAX = 4;
/** Connections one soak process opens to Redis: commands, and the key store's change channel. */
export const REDIS_CONNECTIONS = 2;

export interface Backend {
  readonly store: PostgresKeyStore | RedisKeyStore;
  readonly ledger: CreditLedger;
  readonly limiter: RateLimiter;
  /** The pool (PostgreSQL) or the client (Redis), for the figures and the clean-up. */
  readonly pool?: pg.Pool;
  readonly redis?: { sendCommand(args: string[]): Promise<unknown> };
  close(): Promise<void>;
}

/** The connection name of one process of the run (`role`: `runner`, `w0`, ...). */
export const connectionName = (ns: Namespace, role: string) => `${ns.run}-${role}`;

/**
 * Opens the store, ledger and limiter of `ns` for one process.
 *
 * @example
 * const parts = await openBackend(ns, 'w0'); ...; await parts.close();
 */
export async function openBackend(ns: Namespace, role: string): Promise<Backend> {
  if (ns.backend === 'postgres') {
    const pool = new pg.Pool({
      connectionString: ns.pgUrl,
      max: PG_POOL_MAX,
      application_name: connectionName(ns, role),
    });
    // A pool error (a dropped idle connection) must not end the process; the next query reconnects.
    pool.on('error', () => {});
    const store = new PostgresKeyStore({ client: pool, schema: ns.schema });
    const ledger = new PostgresCreditLedger({ client: pool, schema: ns.schema });
    const limiter = new PostgresRateLimiter({ client: pool, schema: ns.schema });
    return {
      store,
      ledger,
      limiter,
      pool,
      async close() {
        store.close();
        await pool.end();
      },
    };
  }
  const redis = createClient({ url: ns.redisUrl, name: connectionName(ns, role) });
  redis.on('error', () => {});
  await redis.connect();
  const store = new RedisKeyStore({ client: redis, prefix: ns.prefix });
  const ledger = new RedisCreditLedger({ client: redis, prefix: `${ns.prefix}credits:` });
  const limiter = new RedisRateLimiter({ client: redis, prefix: `${ns.prefix}rl:` });
  return {
    store,
    ledger,
    limiter,
    redis,
    async close() {
      store.close();
      redis.destroy();
    },
  };
}

/**
 * Creates the tables of `ns` (PostgreSQL; Redis needs none).
 *
 * @example
 * await migrate(runnerParts);
 */
export async function migrate(parts: Backend): Promise<void> {
  if (!(parts.store instanceof PostgresKeyStore)) return;
  await parts.store.migrate();
  await (parts.ledger as PostgresCreditLedger).migrate();
  await (parts.limiter as PostgresRateLimiter).migrate();
}

/**
 * Removes everything the run wrote: the schema, or every key under the prefix.
 *
 * @example
 * await removeNamespace(ns, runnerParts);
 */
export async function removeNamespace(ns: Namespace, parts: Backend): Promise<void> {
  if (parts.pool) {
    await parts.pool.query(`DROP SCHEMA IF EXISTS "${ns.schema}" CASCADE`);
    return;
  }
  const redis = parts.redis as NonNullable<Backend['redis']>;
  let cursor = '0';
  do {
    const [next, found] = (await redis.sendCommand(['SCAN', cursor, 'MATCH', `${ns.prefix}*`, 'COUNT', '1000'])) as [
      string,
      string[],
    ];
    if (found.length) await redis.sendCommand(['DEL', ...found]);
    cursor = next;
  } while (cursor !== '0');
}
