// One process of the leased-ledger outage tests (bundled like lease-child.ts, run by plain `node`): a
// LeasedCreditLedger over Redis or PostgreSQL reached at `url`, the test's TCP proxy in front of the
// store. It reads commands on stdin and answers each with one JSON line whose event is the command's tag:
// - "spend <tag>": `spend[key]` billed requests of 1 credit on each key (the keys in parallel, each one
//   at a time), then waits for the next slices on their way (`idle()`): { spent: { key: n } };
// - "serve <tag>": billed requests on each key until one is refused or fails (a 503): { spent, failed }.
// `spent` counts the requests whose hold and settle both answered: work served and billed to the key.
import { createInterface } from 'node:readline';
import { LeasedCreditLedger } from 'keygate';
import { PostgresCreditLedger } from 'keygate/postgres';
import { RedisCreditLedger } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';

interface Args {
  kind: 'redis' | 'postgres';
  url: string;
  ns: string;
  accountId: string;
  /** Requests of the "spend" command, per key. */
  spend: Record<string, number>;
  maxSlice: number;
  sliceTtlMs: number;
  /** The shared ledger's deadline; the leased ledger's is twice it. */
  timeoutMs: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

async function openShared() {
  if (args.kind === 'redis') {
    const client = createClient({ url: args.url, socket: { reconnectStrategy: () => 100 } });
    // A cut connection is reported here; the ledger's calls fail by themselves (their deadline).
    client.on('error', () => {});
    await client.connect();
    return new RedisCreditLedger({ client, prefix: `${args.ns}cr:`, timeoutMs: args.timeoutMs });
  }
  const pool = new pg.Pool({ connectionString: args.url, max: 4, connectionTimeoutMillis: args.timeoutMs });
  pool.on('error', () => {});
  return new PostgresCreditLedger({ client: pool, schema: args.ns, timeoutMs: args.timeoutMs });
}

const ledger = new LeasedCreditLedger({
  ledger: await openShared(),
  maxSlice: args.maxSlice,
  sliceTtlMs: args.sliceTtlMs,
  timeoutMs: 2 * args.timeoutMs,
});
const keys = Object.keys(args.spend);
const spent: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]));

/** One billed request of 1 credit on `keyId`: whether it was served and billed. */
async function request(keyId: string): Promise<boolean> {
  const held = await ledger.hold(args.accountId, 1, { keyId });
  if (!held.ok) return false;
  await ledger.settle(held.holdId);
  spent[keyId] = (spent[keyId] ?? 0) + 1;
  return true;
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command = '', tag = command] = line.trim().split(' ');
  if (command === 'spend') {
    const lanes = keys.map(async (keyId) => {
      for (let i = 0; i < (args.spend[keyId] ?? 0); i++) if (!(await request(keyId))) throw new Error('refused');
    });
    Promise.all(lanes)
      .then(() => ledger.idle())
      .then(() => say({ event: tag, spent }))
      .catch((err: unknown) => say({ event: 'error', message: String(err) }));
    return;
  }
  const failed: Record<string, string> = {};
  const lanes = keys.map(async (keyId) => {
    try {
      while (await request(keyId));
      failed[keyId] = 'refused';
    } catch (err) {
      failed[keyId] = (err as { code?: string }).code ?? String(err);
    }
  });
  void Promise.all(lanes).then(() => say({ event: tag, spent, failed }));
});
say({ event: 'ready' });
