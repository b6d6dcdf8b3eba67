import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

/**
 * Bundles a worker entry the way a Workers build would: `keygate` resolves to its sources (the
 * `source` condition) and `#digest` to the Web Crypto implementation (no `node` condition).
 * `nodePaths`: more folders to find packages in, as an entry's own `node_modules` would hold them.
 */
export async function bundleWorker(entry: string | URL, nodePaths: string[] = []): Promise<string> {
  const result = await build({
    nodePaths,
    entryPoints: [entry instanceof URL ? fileURLToPath(entry) : entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    conditions: ['source', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    target: 'es2022',
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

/** Starts workerd through miniflare with `script`; call `dispose()` when done. */
export function startWorker(script: string, bindings: Record<string, string> = {}): Miniflare {
  return new Miniflare({ modules: true, script, compatibilityDate: '2024-09-23', bindings });
}
