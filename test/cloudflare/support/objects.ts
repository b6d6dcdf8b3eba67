import { Miniflare } from 'miniflare';
import { bundleWorker } from '../../frameworks/workerd.js';

/** The bindings the test Worker declares: one namespace per keygate object class. */
export const BINDINGS = { limits: 'KEYGATE_LIMITS', credits: 'KEYGATE_CREDITS' } as const;

/**
 * Starts workerd (Miniflare, in memory) with keygate's Durable Object classes, SQLite-backed as
 * `new_sqlite_classes` declares them; call `dispose()` when done.
 */
export async function startObjects(): Promise<Miniflare> {
  const script = await bundleWorker(new URL('../worker/objects.ts', import.meta.url));
  return new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2024-09-23',
    durableObjects: {
      [BINDINGS.limits]: { className: 'KeygateRateLimitObject', useSQLite: true },
      [BINDINGS.credits]: { className: 'KeygateCreditObject', useSQLite: true },
    },
  });
}
