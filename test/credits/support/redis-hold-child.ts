// One process of the cross-process credit tests, bundled by esbuild and run by plain `node`: opens its
// own ledger on its own connection, says `ready`, waits for `go` on stdin, then takes `n` concurrent
// holds of 1 credit and prints the ids of those granted. It stays up until its parent ends it (or kills
// it holding), so that a hold's lapse is the only way back for its credits.
import { createInterface } from 'node:readline';
import { RedisCreditLedger } from 'keygate/redis';
import { createClient } from 'redis';

interface Args {
  url: string;
  prefix: string;
  accountId: string;
  n: number;
  ttlMs: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

const client = await createClient({ url: args.url }).connect();
const ledger = new RedisCreditLedger({ client, prefix: args.prefix, timeoutMs: 30_000 });
// Loads the hold script before `go` (no account holds that much), so that the holds race each other.
await ledger.hold(args.accountId, Number.MAX_SAFE_INTEGER);
say({ event: 'ready' });
const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
const results = await Promise.all(
  Array.from({ length: args.n }, () => ledger.hold(args.accountId, 1, { ttlMs: args.ttlMs })),
);
say({ event: 'done', holdIds: results.flatMap((r) => (r.ok ? [r.holdId] : [])) });
lines.once('close', () => client.destroy());
