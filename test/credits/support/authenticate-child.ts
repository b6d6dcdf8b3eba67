// One process of the cross-process billing test, bundled by esbuild and run by plain `node`: holds the
// live key given (imported into its own MemoryKeyStore) and its own connection to the shared ledger,
// says `ready`, waits for `go` on stdin, then authenticates `n` concurrent requests of cost 1 through
// `authenticate` with the `credits` option, settles every allowed one as an adapter does after a 200
// (`finishCredits`), and prints the statuses it answered.
import { createInterface } from 'node:readline';
import { authenticate, type CreditLedger, KeyManager, MemoryKeyStore } from 'keygate';
import { finishCredits } from 'keygate/adapter-kit';
import { PostgresCreditLedger } from 'keygate/postgres';
import { RedisCreditLedger } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';

interface Args {
  backend: 'postgres' | 'redis';
  url: string;
  /** The PostgreSQL schema, or the Redis prefix. */
  namespace: string;
  accountId: string;
  secret: string;
  n: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

let ledger: CreditLedger;
let close: () => Promise<unknown>;
if (args.backend === 'postgres') {
  const pool = new pg.Pool({ connectionString: args.url, max: 4 });
  // Connections are opened before `go`, so that the holds race each other, not the connection set-up.
  await Promise.all(Array.from({ length: 4 }, () => pool.query('SELECT 1')));
  ledger = new PostgresCreditLedger({ client: pool, schema: args.namespace, timeoutMs: 30_000 });
  close = () => pool.end();
} else {
  const client = await createClient({ url: args.url }).connect();
  ledger = new RedisCreditLedger({ client, prefix: args.namespace, timeoutMs: 30_000 });
  close = async () => client.destroy();
}
// Loads the hold script or warms the statements before `go` (no account holds that much).
await ledger.hold(args.accountId, Number.MAX_SAFE_INTEGER);

const store = new MemoryKeyStore();
await new KeyManager({ store }).import({ secret: args.secret, accountId: args.accountId, name: 'shared' });
const options = { timeoutMs: 30_000, credits: { ledger, cost: 1 } };
say({ event: 'ready' });

const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
const statuses = await Promise.all(
  Array.from({ length: args.n }, async () => {
    const result = await authenticate({ headers: { 'x-api-key': args.secret } }, store, options);
    if (result.ok) await finishCredits(result, 200, options);
    return result.ok ? (result.credits ? 'settled' : 'unbilled') : result.code;
  }),
);
say({ event: 'done', statuses });
await close();
process.exit(0);
