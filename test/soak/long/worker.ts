// One app process of the long soak: Express + keygate over one backend, with two billed routes.
// `/direct/v1/verify` bills the shared ledger and counts on the shared limiter, request by request;
// `/leased/v1/verify` goes through `LeasedCreditLedger` and `LeasedRateLimiter` over the same two.
// Keys sit behind a `CachedKeyStore` (which follows the store's change channel), usage is counted by a
// `UsageRecorder`, and a webhook dispatcher sends the outbox's deliveries to the run's receiver.
// Talks to the runner over IPC: `ready` when listening; answers `stats` (after a full GC, so heap
// figures are what is retained) and `stop` (closes everything cleanly, then exits).
import type { AddressInfo } from 'node:net';
import express from 'express';
import { CachedKeyStore, capabilityOf, LeasedCreditLedger, LeasedRateLimiter, UsageRecorder } from 'keygate';
import { apiKeyAuth } from 'keygate/express';
import { createWebhookDispatcher } from 'keygate/webhooks';
import { type Namespace, openBackend } from './backends.js';

interface WorkerArgs {
  ns: Namespace;
  index: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as WorkerArgs;
const send = (message: Record<string, unknown>) => process.send?.(message);
const gc = (globalThis as { gc?: () => void }).gc;

const parts = await openBackend(args.ns, `w${args.index}`);
const store = new CachedKeyStore(parts.store, { ttlMs: 60_000, max: 10_000 });
const usage = new UsageRecorder({ store: parts.store, intervalMs: 2_000, spike: false });
// Small slices, so that they turn over (and settle) many times in a run.
const leasedLedger = new LeasedCreditLedger({ ledger: parts.ledger, maxSlice: 200, sliceTtlMs: 20_000 });
const leasedLimiter = new LeasedRateLimiter({ limiter: parts.limiter, maxSlice: 4 });

const outbox = capabilityOf(parts.store, 'outbox');
if (!outbox) throw new Error('the store holds no outbox');
const dispatched = { delivered: 0, failed: 0, gaveUp: 0, errors: 0 };
const dispatcher = createWebhookDispatcher({
  outbox,
  // The receiver listens on 127.0.0.1: the operator's development setting, never an account's.
  allowPrivateNetworks: true,
  timeoutMs: 2_000,
  leaseMs: 10_000,
  concurrency: 4,
  retry: { baseDelayMs: 1_000, maxDelayMs: 5_000, giveUpAfterMs: 120_000 },
  onAttemptFailed: () => void dispatched.failed++,
});
// A loop of our own rather than `start()`: runOnce reports what it delivered.
let dispatching = true;
const dispatchLoop = (async () => {
  while (dispatching) {
    try {
      const report = await dispatcher.runOnce();
      dispatched.delivered += report.delivered;
      dispatched.gaveUp += report.gaveUp;
    } catch {
      dispatched.errors++;
    }
    if (dispatching) await new Promise((resolve) => setTimeout(resolve, 500));
  }
})();

const app = express();
const routes = {
  direct: { ledger: parts.ledger, limiter: parts.limiter },
  leased: { ledger: leasedLedger, limiter: leasedLimiter },
};
for (const [name, { ledger, limiter }] of Object.entries(routes)) {
  app.get(
    `/${name}/v1/verify`,
    apiKeyAuth({
      store,
      permissions: ['email:verify'],
      onResult: usage.record,
      rateLimit: { limiter },
      credits: { ledger },
    }),
    (_req, res) => {
      res.json({ ok: true });
    },
  );
}

const server = app.listen(0, '127.0.0.1', () => {
  send({ type: 'ready', port: (server.address() as AddressInfo).port });
});
server.keepAliveTimeout = 30_000;

function stats() {
  gc?.();
  const memory = process.memoryUsage();
  const cpu = process.cpuUsage();
  return {
    type: 'stats',
    heapUsed: memory.heapUsed,
    rss: memory.rss,
    external: memory.external,
    cpuMs: (cpu.user + cpu.system) / 1000,
    uncharged: leasedLedger.uncharged,
    dispatched: { ...dispatched },
  };
}

async function stop(): Promise<void> {
  dispatching = false;
  await dispatchLoop;
  await dispatcher.stop();
  await new Promise((resolve) => server.close(resolve));
  // The adapter settles a hold once the response has ended, without waiting: give those a moment.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await leasedLedger.close();
  await leasedLimiter.close();
  await usage.close();
  store.close();
  await parts.close();
  send({ type: 'stopped', uncharged: leasedLedger.uncharged, dispatched });
  process.exit(0);
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'stats') send(stats());
  if (message.type === 'stop') void stop();
});
// The runner gone (killed): nothing to report to.
process.on('disconnect', () => process.exit(1));
// Ctrl-C reaches the whole process group: the runner decides when a worker stops.
process.on('SIGINT', () => {});
