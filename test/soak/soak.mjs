// `npm run soak -- [--store postgres|redis|all] [--minutes 30] [--warmup-minutes 3] ...`: the long soak
// (test/soak/long/main.ts). `npm run soak -- --seconds 20 [--concurrency 32] [--max-requests N]`: the
// short correctness run over both stores (test/soak/run.ts). Either is bundled with esbuild (keygate
// from its TypeScript sources, npm packages left external) and run under plain node; the bundles sit
// under node_modules/.cache so their bare imports resolve. Not part of `npm test`.
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '../..');
const outDir = join(root, 'node_modules/.cache/keygate-soak');
await mkdir(outDir, { recursive: true });

// Bare imports stay external except keygate itself, which is bundled from source.
const npmExternal = {
  name: 'npm-external',
  setup(b) {
    b.onResolve({ filter: /^[^./#]/ }, (args) =>
      args.path === 'keygate' || args.path.startsWith('keygate/') ? undefined : { path: args.path, external: true },
    );
  },
};

async function bundle(entry, name) {
  const outfile = join(outDir, `${name}.mjs`);
  await build({
    entryPoints: [join(import.meta.dirname, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source', 'node'],
    plugins: [npmExternal],
    logLevel: 'warning',
  });
  return outfile;
}

const args = process.argv.slice(2);
const check = args.includes('--seconds');
const [main, flags] = check
  ? [await bundle('run.ts', 'run'), ['--app', await bundle('app.ts', 'app')]]
  : [await bundle('long/main.ts', 'long-main'), ['--worker', await bundle('long/worker.ts', 'long-worker')]];

// --expose-gc: the long soak reads each process's heap after a full collection.
const child = spawn(process.execPath, ['--expose-gc', main, ...flags, ...args], { stdio: 'inherit' });
process.on('SIGINT', () => child.kill('SIGINT'));
child.on('exit', (code) => process.exit(code ?? 1));
