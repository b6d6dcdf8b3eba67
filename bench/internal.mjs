// Internals the benchmark measures on their own although `keygate` does not export them (the
// allow-list matcher): bundled from the sources with the same esbuild settings as the package build,
// then imported from memory.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const REPO = new URL('..', import.meta.url).pathname;

async function bundle(options) {
  const result = await build({
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    // `#errors` (the package's `imports` map) from the sources too, like everything else here, and
    // Node's synchronous digest (`#digest`), as the package gives Node.
    conditions: ['source', 'node'],
    external: ['node:*'],
    target: 'es2022',
    logLevel: 'silent',
    // Dependencies (lru-cache, for a tree from before the cache had its own map) from this checkout, also for a tree checked out elsewhere.
    nodePaths: [join(REPO, 'node_modules')],
    ...options,
  });
  const code = Buffer.from(result.outputFiles[0].contents).toString('base64');
  return import(`data:text/javascript;base64,${code}`);
}

/** The module at `path` (relative to the repository root, a TypeScript source under `src/`). */
export function importSource(path) {
  return bundle({ entryPoints: [join(REPO, path)] });
}

/**
 * One module of the sources under `root` (default: this checkout) exporting what `code` re-exports,
 * e.g. `export { authenticate } from './src/index.ts'`: several internals in one bundle, so that
 * they share their module state as they do in the package.
 */
export function importSources(code, root = REPO) {
  return bundle({ stdin: { contents: code, resolveDir: root, loader: 'ts' } });
}

/**
 * The sources of git revision `ref` (`src/` and the package manifest) in a temporary directory, for
 * a before/after measurement with {@link importSources}. Returns the directory and its remover.
 */
export function checkoutSources(ref) {
  const dir = mkdtempSync(join(tmpdir(), 'keygate-ref-'));
  mkdirSync(dir, { recursive: true });
  const tar = execFileSync('git', ['-C', REPO, 'archive', ref, 'src', 'package.json'], { maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
