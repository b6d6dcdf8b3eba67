// The long soak (`npm run soak`, see docs/reference/development.md): for each store, PostgreSQL then
// Redis, Express workers over that store take a steady mix of billed, rate-limited, test and bad-key
// requests for `--minutes`, while keys change through KeyManager, accounts are topped up, webhooks
// go out to a local receiver and retention prunes every few seconds. Figures (each process's heap
// and RSS, the run's connections, the store's tables or key patterns) are sampled at warm-up end,
// every few minutes and at the end; the report says, figure by figure, whether they stayed flat, and
// whether every check held. Exit code 1 when a figure grew or a check failed.
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { capabilityOf, KeyManager } from 'keygate';
import {
  type BackendName,
  migrate,
  type Namespace,
  openBackend,
  PG_POOL_MAX,
  REDIS_CONNECTIONS,
  removeNamespace,
} from './backends.js';
import { startChurn } from './churn.js';
import { ownFigures, type Sample, storeFigures } from './figures.js';
import { startFunding } from './funding.js';
import { billing, watchLedger } from './ledger-checks.js';
import { populate } from './population.js';
import { startReceiver } from './receiver.js';
import { repeat } from './repeat.js';
import { progressLine, type RunSettings, type StoreResult, serverErrors, storeSection } from './report.js';
import { retentionOf } from './retention.js';
import { startTraffic } from './traffic.js';
import { type Activity, judge } from './verdict.js';
import { startWorker, type Worker, type WorkerStats } from './workers.js';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'all' },
    minutes: { type: 'string', default: '30' },
    'warmup-minutes': { type: 'string', default: '3' },
    'progress-minutes': { type: 'string' },
    'keep-minutes': { type: 'string', default: '2' },
    'prune-seconds': { type: 'string', default: '30' },
    rps: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '16' },
    workers: { type: 'string', default: '2' },
    'change-seconds': { type: 'string', default: '2' },
    'redis-db': { type: 'string', default: '13' },
    out: { type: 'string', default: 'soak-report.md' },
    'keep-data': { type: 'boolean', default: false },
    worker: { type: 'string' },
  },
});

const number = (name: keyof typeof args, min: number): number => {
  const value = Number(args[name]);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
  return value;
};
const MINUTES = number('minutes', 0.1);
const settings: RunSettings = {
  minutes: MINUTES,
  warmupMinutes: number('warmup-minutes', 0),
  workers: Math.floor(number('workers', 1)),
  rps: number('rps', 1),
  concurrency: Math.floor(number('concurrency', 1)),
  keepMs: number('keep-minutes', 0) * 60_000,
  pruneMs: number('prune-seconds', 1) * 1000,
  changeMs: number('change-seconds', 0.1) * 1000,
};
const PROGRESS_MS =
  (args['progress-minutes'] ? number('progress-minutes', 0.1) : Math.min(5, Math.max(0.5, MINUTES / 6))) * 60_000;
const STORES: BackendName[] =
  args.store === 'all'
    ? ['postgres', 'redis']
    : args.store === 'postgres' || args.store === 'redis'
      ? [args.store]
      : [];
if (STORES.length === 0) throw new Error('--store must be postgres, redis or all');
if (settings.warmupMinutes >= MINUTES) throw new Error('--warmup-minutes must be less than --minutes');
const WORKER_BUNDLE = args.worker as string;
if (!WORKER_BUNDLE) throw new Error('run through `npm run soak` (test/soak/soak.mjs bundles the workers)');
if (settings.warmupMinutes * 60_000 < settings.keepMs + settings.pruneMs) {
  console.warn(
    'note: the warm-up is shorter than the retention window plus a prune interval, so pruned tables are still filling when it ends and will show growth',
  );
}

const PG_URL = process.env.KEYGATE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = new URL(process.env.KEYGATE_REDIS_URL ?? 'redis://127.0.0.1:6379');
redisUrl.pathname = `/${Math.floor(number('redis-db', 0))}`;

const interrupted = new AbortController();
process.on('SIGINT', () => interrupted.abort());
const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    if (interrupted.signal.aborted) return resolve();
    const wake = () => {
      clearTimeout(timer);
      interrupted.signal.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setTimeout(wake, Math.max(0, ms));
    interrupted.signal.addEventListener('abort', wake, { once: true });
  });

function namespaceOf(backend: BackendName): Namespace {
  const id = `${process.pid.toString(36)}${Date.now().toString(36)}`;
  return {
    backend,
    run: `keygate-soak-${id}`,
    pgUrl: PG_URL,
    schema: `keygate_soak_${id}`,
    redisUrl: redisUrl.href,
    prefix: `keygate-soak:${id}:`,
  };
}

async function soak(backend: BackendName): Promise<StoreResult> {
  const ns = namespaceOf(backend);
  const runner = await openBackend(ns, 'runner');
  const receiver = await startReceiver();
  const workers: Worker[] = [];
  try {
    await migrate(runner);
    const manager = new KeyManager({ store: runner.store });
    const outbox = capabilityOf(runner.store, 'outbox');
    if (!outbox) throw new Error(`the ${backend} store holds no outbox`);
    const population = await populate(manager, outbox, receiver);
    const funding = await startFunding(runner.ledger, population.accounts, ns.run);
    const churn = await startChurn(manager, population.accounts, receiver);
    for (let i = 0; i < settings.workers; i++) workers.push(await startWorker(WORKER_BUNDLE, ns, i));

    const retention = await retentionOf(runner, settings.keepMs, backend === 'postgres' ? ns.schema : undefined);
    console.log(`prune present: ${retention.parts.map((p) => `${p.name} ${p.present ? 'yes' : 'no'}`).join(', ')}`);
    const watch = watchLedger(runner.ledger, population.accounts);
    const loops = {
      'key changes': repeat(settings.changeMs, () => churn.step()),
      'top-ups': repeat(5_000, () => funding.round()),
      retention: repeat(settings.pruneMs, () => retention.run()),
      'ledger checks': repeat(30_000, () => watch.run()),
    };
    const traffic = startTraffic({
      bases: workers.map((w) => w.base),
      population,
      churn,
      rps: settings.rps,
      concurrency: settings.concurrency,
    });
    const startedAt = new Date().toISOString();
    const t0 = performance.now();
    const samples: Sample[] = [];
    const activity = new Map<Sample, Activity>();
    let lastStats: WorkerStats[] = [];

    const sample = async (label: string): Promise<Sample> => {
      // Right after a prune pass, so that every sample sees the tables at the same point of the cycle.
      await loops.retention.now();
      lastStats = await Promise.all(workers.map((w) => w.stats()));
      const figures = await storeFigures(ns, runner);
      const taken: Sample = {
        label,
        atMs: performance.now() - t0,
        processes: [...lastStats, ownFigures()],
        ...figures,
      };
      const charged = [...traffic.tally.served.values()].reduce((a, b) => a + b, 0);
      activity.set(taken, { keysCreated: churn.created, charged, topUps: funding.topUps });
      samples.push(taken);
      console.log(progressLine(backend, taken, traffic.tally.sent));
      return taken;
    };
    const at = (ms: number) => sleep(t0 + ms - performance.now());

    const warmupMs = settings.warmupMinutes * 60_000;
    const durationMs = MINUTES * 60_000;
    await at(warmupMs);
    const warm = await sample('warm-up end');
    for (
      let next = warmupMs + PROGRESS_MS;
      next < durationMs - 5_000 && !interrupted.signal.aborted;
      next += PROGRESS_MS
    ) {
      await at(next);
      if (interrupted.signal.aborted) break;
      await sample('progress');
    }
    await at(durationMs);
    const last = await sample('end');
    const elapsedMs = performance.now() - t0;

    await traffic.stop();
    await loops['key changes'].stop();
    await loops['top-ups'].stop();
    // Every key change's webhook should arrive; retries come within seconds.
    const drainStart = performance.now();
    while (receiver.missing() > 0 && performance.now() - drainStart < 60_000 && !interrupted.signal.aborted) {
      await sleep(250);
    }
    const drainMs = performance.now() - drainStart;
    const stopped = await Promise.all(workers.map((w) => w.stop()));
    await loops.retention.stop();
    await loops['ledger checks'].stop();
    const bills = await billing(runner.ledger, population.accounts, funding.toppedUp, traffic.tally.served, 15_000);
    await watch.run();

    const ceiling = (backend === 'postgres' ? PG_POOL_MAX : REDIS_CONNECTIONS) * (settings.workers + 1);
    const verdicts = judge(warm, last, activity.get(warm) as Activity, activity.get(last) as Activity, ceiling);
    const uncharged = stopped.reduce((sum, s) => sum + (s?.uncharged ?? 0), 0);
    const dispatched = { delivered: 0, failed: 0, gaveUp: 0, errors: 0 };
    for (const s of lastStats)
      for (const k of Object.keys(dispatched) as (keyof typeof dispatched)[]) dispatched[k] += s.dispatched[k];
    const background = Object.entries(loops).map(([name, loop]) => ({
      name,
      failures: loop.failures,
      lastError: loop.lastError,
    }));

    const t = traffic.tally;
    const failures: string[] = [];
    const fail = (when: boolean, line: string) => when && failures.push(line);
    fail(interrupted.signal.aborted, 'the run was interrupted');
    fail(
      t.unexpected > 0,
      `${t.unexpected} requests got a status their group never should (${serverErrors(t)} of them 5xx)`,
    );
    fail(t.networkErrors > 0, `${t.networkErrors} requests failed at the network level`);
    fail(
      t.lateAllows > 0,
      `${t.lateAllows} requests were allowed later than 1 s after their key was taken out of service`,
    );
    for (const f of watch.failures) failures.push(`ledger: ${f}`);
    for (const b of bills.filter((row) => !row.ok)) {
      failures.push(`billing of ${b.account}: ${b.served} live 200s, ${b.charged} charged, ${b.held} still held`);
    }
    fail(uncharged > 0, `the leased ledgers left ${uncharged} spent credits uncharged`);
    fail(receiver.missing() > 0, `${receiver.missing()} key changes never reached the receiver as a webhook`);
    fail(receiver.tally.badSignatures > 0, `${receiver.tally.badSignatures} webhooks had a bad signature`);
    for (const p of retention.parts.filter((part) => part.failures > 0)) {
      failures.push(`prune of the ${p.name} failed ${p.failures} times (${p.lastError})`);
    }
    for (const b of background.filter((task) => task.failures > 0)) {
      failures.push(`background task "${b.name}" failed ${b.failures} times (${b.lastError})`);
    }
    fail(
      stopped.some((s) => s === undefined),
      'a worker did not stop cleanly',
    );

    return {
      backend,
      settings,
      startedAt,
      elapsedMs,
      samples,
      verdicts,
      connectionCeiling: ceiling,
      traffic: t,
      changes: churn.counts,
      webhooks: {
        ...receiver.tally,
        missing: receiver.missing(),
        missingExamples: receiver.missingExamples().slice(0, 5),
        drainMs,
      },
      dispatched,
      retention: retention.parts,
      ledger: watch,
      billing: bills,
      uncharged,
      background,
      failures,
    };
  } finally {
    for (const w of workers) w.kill();
    await receiver.close();
    if (!args['keep-data']) await removeNamespace(ns, runner).catch((err) => console.error('cleanup failed:', err));
    else
      console.log(
        `kept the data: ${backend === 'postgres' ? `schema ${ns.schema}` : `prefix ${ns.prefix} in ${ns.redisUrl}`}`,
      );
    await runner.close();
  }
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
// The options given (after `--worker <bundle>`), for the report's first line.
const given = process.argv.slice(4);
// The report is the docs' "Soak figures" section (docs/guide/soak.md), ready to paste there.
const header = [
  '## Soak figures',
  '',
  `\`npm run soak${given.length > 0 ? ` -- ${given.join(' ')}` : ''}\` on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, load average ${load()} at the start.`,
  '',
];
const sections: string[] = [];
let ok = true;
for (const backend of STORES) {
  if (interrupted.signal.aborted) break;
  console.log(`soak on ${backend}: ${MINUTES} min (${settings.warmupMinutes} min warm-up)`);
  const result = await soak(backend);
  const flagged = result.verdicts.filter((v) => v.flagged);
  ok &&= flagged.length === 0 && result.failures.length === 0;
  console.log(
    `${backend}: ${flagged.length === 0 ? 'flat' : `grew: ${flagged.map((v) => v.figure).join(', ')}`}; ${result.failures.length === 0 ? 'every check held' : result.failures.join('; ')}`,
  );
  sections.push(storeSection(result));
}
header.push(`Load average ${load()} at the end.`, '');
await writeFile(args.out as string, [...header, ...sections].join('\n'));
console.log(`report: ${args.out}`);
process.exitCode = ok && !interrupted.signal.aborted ? 0 : 1;
