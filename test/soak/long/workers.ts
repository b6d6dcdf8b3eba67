// The runner's side of the workers: spawns each (plain node with --expose-gc, so its heap figure is
// taken after a full GC), waits for it to listen, asks for its figures and stops it, over IPC.
import { type ChildProcess, fork } from 'node:child_process';
import type { Namespace } from './backends.js';
import type { ProcessFigures } from './figures.js';

export interface WorkerStats extends ProcessFigures {
  /** `LeasedCreditLedger.uncharged`: credits spent whose slice lapsed before it was settled. */
  readonly uncharged: number;
  readonly dispatched: { delivered: number; failed: number; gaveUp: number; errors: number };
}

export interface Worker {
  readonly name: string;
  readonly base: string;
  stats(): Promise<WorkerStats>;
  /** Closes it cleanly (its leased slices settled, usage flushed) and waits for it to exit. */
  stop(): Promise<{ uncharged: number } | undefined>;
  kill(): void;
}

const ASK_TIMEOUT_MS = 30_000;

function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', listen);
      reject(new Error(`no ${type} from the worker within ${ASK_TIMEOUT_MS} ms`));
    }, ASK_TIMEOUT_MS);
    const listen = (message: { type: string }) => {
      if (message.type !== type) return;
      clearTimeout(timer);
      child.off('message', listen);
      resolve(message as T);
    };
    child.on('message', listen);
  });
}

/**
 * Starts worker `index` of `ns` from the bundle at `bundle`.
 *
 * @example
 * const worker = await startWorker(bundle, ns, 0); await worker.stats();
 */
export async function startWorker(bundle: string, ns: Namespace, index: number): Promise<Worker> {
  const child = fork(bundle, [JSON.stringify({ ns, index })], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ready = await Promise.race([
    nextMessage<{ port: number }>(child, 'ready'),
    exited.then((code) => Promise.reject(new Error(`worker ${index} exited with ${code} before listening`))),
  ]);
  const name = `worker ${index}`;
  return {
    name,
    base: `http://127.0.0.1:${ready.port}`,
    async stats() {
      const reply = nextMessage<Omit<WorkerStats, 'name'>>(child, 'stats');
      child.send({ type: 'stats' });
      return { ...(await reply), name };
    },
    async stop() {
      if (child.exitCode !== null) return undefined;
      const stopped = nextMessage<{ uncharged: number }>(child, 'stopped').catch(() => undefined);
      child.send({ type: 'stop' });
      const reply = await stopped;
      await exited;
      return reply;
    },
    kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
