// A process with a LeasedRateLimiter or a LeasedCreditLedger over a shared backend. It reads
// commands on stdin ("run <tag> <n>": n requests, `concurrency` at a time; "close <tag>": close()),
// and answers each with one JSON line whose event is the command's tag.
import { createInterface } from 'node:readline';
import { LeasedCreditLedger, LeasedRateLimiter } from 'keygate/store-kit';
import { type BackendKind, openBackend } from './backends.js';

interface Args {
  kind: BackendKind;
  url: string;
  ns: string;
  mode: 'limit' | 'credit';
  /** The key (limits) or the account (credits). */
  id: string;
  limit: number;
  windowMs: number;
  maxSlice: number;
  divisor: number;
  sliceTtlMs?: number;
  concurrency: number;
  /** Credits: the keys the requests alternate between. */
  keys?: string[];
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const backend = await openBackend(args.kind, args.url, args.ns);
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

const limiter = new LeasedRateLimiter({ limiter: backend.limiter, maxSlice: args.maxSlice, divisor: args.divisor });
const ledger = new LeasedCreditLedger({
  ledger: backend.ledger,
  maxSlice: args.maxSlice,
  divisor: args.divisor,
  ...(args.sliceTtlMs === undefined ? {} : { sliceTtlMs: args.sliceTtlMs }),
});
const policy = { limit: args.limit, windowMs: args.windowMs };
const keys = args.keys ?? ['key_a'];

async function run(tag: string, n: number): Promise<void> {
  let next = 0;
  let allowed = 0;
  let refused = 0;
  const charged: Record<string, number> = {};
  const loop = async (lane: number) => {
    while (next < n) {
      next++;
      if (args.mode === 'limit') {
        if ((await limiter.consume(args.id, policy, 1)).allowed) allowed++;
        else refused++;
        continue;
      }
      const keyId = keys[lane % keys.length] as string;
      const held = await ledger.hold(args.id, 1, { keyId });
      if (!held.ok) {
        refused++;
        continue;
      }
      const settled = await ledger.settle(held.holdId);
      allowed++;
      charged[keyId] = (charged[keyId] ?? 0) + settled.charged;
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, (_, lane) => loop(lane)));
  say({
    event: tag,
    allowed,
    refused,
    charged,
    held: args.mode === 'limit' ? limiter.held(args.id) : ledger.free(args.id),
  });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command = '', tag = command, n = '0'] = line.trim().split(' ');
  const done =
    command === 'run'
      ? run(tag, Number(n))
      : (args.mode === 'limit' ? limiter.close() : ledger.close()).then(() => say({ event: tag }));
  done.catch((err: unknown) => say({ event: 'error', message: String(err) }));
});
say({ event: 'ready' });
