// A process with a LeasedRateLimiter or a LeasedCreditLedger over a shared backend. It reads
// commands on stdin ("run <tag> <n>": n requests, `concurrency` at a time; "close <tag>": close()),
// and answers each with one JSON line whose event is the command's tag.
import { createInterface } from 'node:readline';
import { LeasedCreditLedger, LeasedRateLimiter } from 'keygate';
import { type BackendKind, openBackend } from './backends.js';
import { type HammerArgs, hammer, LATE_AFTER_MS } from './hammer.js';

interface Args extends HammerArgs {
  kind: BackendKind;
  url: string;
  ns: string;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const backend = await openBackend(args.kind, args.url, args.ns);
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

// The tests count every unit and credit, so a top-up must not give its grant back late (past the
// wrappers' deadline, as it would on a machine loaded by the rest of the suite): they wait as long as
// the test does. Deadlines have tests of their own (deadline.test.ts).
const limiter = new LeasedRateLimiter({
  limiter: backend.limiter,
  maxSlice: args.maxSlice,
  divisor: args.divisor,
  timeoutMs: LATE_AFTER_MS,
});
const ledger = new LeasedCreditLedger({
  ledger: backend.ledger,
  maxSlice: args.maxSlice,
  divisor: args.divisor,
  timeoutMs: LATE_AFTER_MS,
  ...(args.sliceTtlMs === undefined ? {} : { sliceTtlMs: args.sliceTtlMs }),
});

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command = '', tag = command, n = '0'] = line.trim().split(' ');
  const done =
    command === 'run'
      ? hammer(args, Number(n), limiter, ledger).then((ran) => say({ event: tag, ...ran }))
      : (args.mode === 'limit' ? limiter.close() : ledger.close()).then(() => say({ event: tag }));
  done.catch((err: unknown) => say({ event: 'error', message: String(err) }));
});
say({ event: 'ready' });
