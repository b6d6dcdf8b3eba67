import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The example Worker (`examples/hono-workers`) on workerd, as wrangler would run it: bundled for
 * Workers, with its wrangler.toml's Durable Object bindings (SQLite-backed classes), `vars` the
 * bindings given. The example is a package of its own that depends on keygate as `file:../..`: what
 * its `npm install` links into its node_modules, a temporary folder holds here. Call `stop()` when done.
 */
export async function startExample(vars: Record<string, string>): Promise<{ mf: Miniflare; stop(): Promise<void> }> {
  const modules = mkdtempSync(join(tmpdir(), 'keygate-workers-modules-'));
  try {
    symlinkSync(ROOT, join(modules, 'keygate'), 'dir');
    const result = await build({
      nodePaths: [modules],
      entryPoints: [join(ROOT, 'examples/hono-workers/src/index.js')],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      conditions: ['source', 'worker', 'browser'],
      mainFields: ['module', 'main'],
      target: 'es2022',
      logLevel: 'silent',
    });
    const mf = new Miniflare({
      modules: true,
      script: result.outputFiles[0]?.text ?? '',
      compatibilityDate: '2024-09-23',
      bindings: vars,
      d1Databases: ['DB'],
      kvNamespaces: ['KEYS'],
      durableObjects: {
        KEYGATE_LIMITS: { className: 'KeygateRateLimitObject', useSQLite: true },
        KEYGATE_CREDITS: { className: 'KeygateCreditObject', useSQLite: true },
      },
    });
    await mf.ready;
    return {
      mf,
      async stop() {
        await mf.dispose();
        rmSync(modules, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(modules, { recursive: true, force: true });
    throw err;
  }
}
