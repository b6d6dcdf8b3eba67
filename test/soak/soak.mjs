// `npm run soak -- [--seconds 20] [--concurrency 32] [--max-requests N]`: bundles the soak run and its
// app with esbuild (keygate from its TypeScript sources, npm packages left external) and runs it
// under plain node. The bundles sit under node_modules/.cache so their bare imports resolve.
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

for (const name of ['app', 'run']) {
  await build({
    entryPoints: [join(import.meta.dirname, `${name}.ts`)],
    outfile: join(outDir, `${name}.mjs`),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source', 'node'],
    plugins: [npmExternal],
    logLevel: 'warning',
  });
}

const child = spawn(
  process.execPath,
  [join(outDir, 'run.mjs'), '--app', join(outDir, 'app.mjs'), ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
child.on('exit', (code) => process.exit(code ?? 1));
