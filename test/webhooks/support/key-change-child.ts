// One process of the crash test, bundled by esbuild and run by plain `node`: opens its own key store
// (PostgreSQL or Redis), creates and revokes a key through a KeyManager, prints `written` with the
// key's id, and is killed (SIGKILL, by itself) before anything could dispatch the events.
import { KeyManager } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';

interface Args {
  backend: 'postgres' | 'redis';
  url: string;
  /** The PostgreSQL schema, or the Redis prefix. */
  namespace: string;
  accountId: string;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const store =
  args.backend === 'postgres'
    ? new PostgresKeyStore({ client: new pg.Pool({ connectionString: args.url, max: 2 }), schema: args.namespace })
    : new RedisKeyStore({ client: await createClient({ url: args.url }).connect(), prefix: args.namespace });
const keys = new KeyManager({ store });
const { key } = await keys.create({ accountId: args.accountId, name: 'doomed', mode: 'live' });
await keys.revoke(key.id);
process.stdout.write(`${JSON.stringify({ event: 'written', keyId: key.id })}\n`);
process.kill(process.pid, 'SIGKILL');
