import { Miniflare } from 'miniflare';
import {
  DurableObjectCreditLedger,
  DurableObjectRateLimiter,
} from '../../../backends/cloudflare/durable-objects/index.js';
import type { DurableObjectNamespaceLike } from '../../../backends/cloudflare/durable-objects/workers-types.js';
import { bundleWorker } from '../../frameworks/workerd.js';

/**
 * Starts workerd (Miniflare, in memory) with keygate's Durable Object classes bound as
 * `KEYGATE_LIMITS` and `KEYGATE_CREDITS` (and `KEYGATE_CREDITS_PRUNING`, a credit object that prunes
 * its closed holds after 300 ms), SQLite-backed as `new_sqlite_classes` declares them unless
 * `useSQLite` is false (what a `new_classes` migration gives), and a `STUCK` object that never
 * answers. Call `dispose()` when done.
 */
export async function startObjects({ useSQLite = true } = {}): Promise<Miniflare> {
  const script = await bundleWorker(new URL('../worker/objects.ts', import.meta.url));
  return new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2024-09-23',
    durableObjects: {
      KEYGATE_LIMITS: { className: 'KeygateRateLimitObject', useSQLite },
      KEYGATE_CREDITS: { className: 'KeygateCreditObject', useSQLite },
      KEYGATE_CREDITS_PRUNING: { className: 'PruningCreditObject', useSQLite },
      STUCK: { className: 'StuckObject', useSQLite },
    },
  });
}

/**
 * A binding of `mf` as Node reaches it: Miniflare's proxy of the Workers namespace, with at most
 * `MAX_IN_FLIGHT` fetches on their way at once. The proxy carries each call over a loopback HTTP
 * connection, and past a few hundred at once some fail with EPIPE before reaching workerd; a
 * Worker's own stub has no such hop. A kept-alive connection that workerd closed while it sat idle
 * fails the same way when the next call writes to it, so a call that fails with EPIPE (it never
 * reached the object) is sent once more. The objects still receive the calls interleaved.
 */
export async function namespaceOf(mf: Miniflare, binding: string): Promise<DurableObjectNamespaceLike> {
  const namespace = (await mf.getDurableObjectNamespace(binding)) as unknown as DurableObjectNamespaceLike;
  return {
    idFromName: (name) => namespace.idFromName(name),
    idFromString: (hexId) => namespace.idFromString(hexId),
    get: (id) => {
      const stub = namespace.get(id);
      return {
        fetch: (url, init) =>
          inFlight(() =>
            stub.fetch(url, init).catch((err: unknown) => {
              if (!neverSent(err)) throw err;
              return stub.fetch(url, init);
            }),
          ),
      };
    },
  };
}

/** Whether the proxy's fetch failed writing to a connection workerd had closed (EPIPE). */
export function neverSent(err: unknown): boolean {
  return (err as { cause?: { code?: unknown } })?.cause?.code === 'EPIPE';
}

const MAX_IN_FLIGHT = 32;
let running = 0;
const waiting: Array<() => void> = [];

async function inFlight<T>(call: () => Promise<T>): Promise<T> {
  if (running >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await call();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** A limiter over `KEYGATE_LIMITS` of `mf`, driven from Node. */
export async function limiterOn(mf: Miniflare, timeoutMs = 10_000): Promise<DurableObjectRateLimiter> {
  return new DurableObjectRateLimiter({ namespace: await namespaceOf(mf, 'KEYGATE_LIMITS'), timeoutMs });
}

/** A ledger over `KEYGATE_CREDITS` of `mf`, driven from Node. */
export async function ledgerOn(mf: Miniflare, timeoutMs = 10_000): Promise<DurableObjectCreditLedger> {
  return new DurableObjectCreditLedger({ namespace: await namespaceOf(mf, 'KEYGATE_CREDITS'), timeoutMs });
}
