// One process of the cross-process credit test, bundled by esbuild and run by plain `node`: opens its
// own ledger, says `ready`, waits for `go` on stdin, fires `n` concurrent holds of 1 credit on one
// account and prints the hold ids it got; then waits for a line `{ settle: [...], release: [...] }`,
// settles and releases those holds concurrently and prints what it charged. A test may kill it instead.
import { createInterface } from 'node:readline';
import { PostgresCreditLedger } from 'keygate/postgres';
import pg from 'pg';

interface Args {
  url: string;
  schema: string;
  accountId: string;
  n: number;
  /** The holds' ttl; default the ledger's. */
  ttlMs?: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const nextLine = async () => String((await lines.next()).value ?? '');

const pool = new pg.Pool({ connectionString: args.url, max: 4 });
// Connections are opened before `go`, so that the holds race each other, not the connection set-up.
await Promise.all(Array.from({ length: 4 }, () => pool.query('SELECT 1')));
const ledger = new PostgresCreditLedger({ client: pool, schema: args.schema, timeoutMs: 30_000 });
say({ event: 'ready' });

await nextLine();
const held = await Promise.all(
  Array.from({ length: args.n }, () => ledger.hold(args.accountId, 1, args.ttlMs ? { ttlMs: args.ttlMs } : {})),
);
say({ event: 'held', holdIds: held.flatMap((h) => (h.ok ? [h.holdId] : [])), balances: held.map((h) => h.balance) });

const { settle, release } = JSON.parse(await nextLine()) as { settle: string[]; release: string[] };
const closed = await Promise.all([
  ...settle.map((id) => ledger.settle(id)),
  ...release.map(async (id) => ({ charged: 0, ...(await ledger.release(id)) })),
]);
say({ event: 'closed', charged: closed.reduce((sum, c) => sum + c.charged, 0) });
await pool.end();
process.exit(0);
