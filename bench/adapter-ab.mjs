// Before/after of the Fastify and Hono adapters on the HTTP path: this checkout's adapters against
// those of git revision REF, each framework's no-op beside them, GET and POST, in one alternated run.
//   npm run build && node bench/adapter-ab.mjs REF [ROUNDS] [SECONDS]
// REF's `frameworks/` are bundled over this checkout's build of `keygate` and `keygate/adapter-kit`
// (so an adapter that needs a newer core than REF's cannot be compared this way).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { generateKey } from 'keygate';
import { pinLoadGenerator, runHttp } from './http.mjs';
import { ratio } from './http-report.mjs';

const [ref = 'HEAD', rounds = '4', seconds = '3'] = process.argv.slice(2);
const REPO = new URL('..', import.meta.url).pathname;
// Inside the repository (bench/.build is ignored by git), so that the bundles resolve `keygate` to this build.
const dir = mkdtempSync(join(REPO, 'bench/.build-ref-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  const tar = execFileSync('git', ['-C', REPO, 'archive', ref, 'frameworks/fastify', 'frameworks/hono'], {
    maxBuffer: 1 << 26,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  for (const name of ['fastify', 'hono']) {
    await build({
      entryPoints: [join(dir, 'frameworks', name, 'index.ts')],
      outfile: join(dir, `${name}.mjs`),
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'es2022',
      packages: 'external',
      logLevel: 'silent',
    });
  }
  process.env.BENCH_REF_DIR = dir;
  pinLoadGenerator();
  const variants = [
    'fastify-noop',
    'fastify-keygate-ref',
    'fastify-keygate',
    'hono-noop',
    'hono-keygate-ref',
    'hono-keygate',
  ];
  const http = await runHttp({
    key: generateKey({ mode: 'live' }),
    rounds: Number(rounds),
    seconds: Number(seconds),
    warmup: 1,
    variants,
    requests: ['get', 'post'],
    log: (line) => process.stderr.write(`[adapter-ab] ${line}\n`),
  });
  for (const route of ['get', 'post']) {
    for (const f of ['fastify', 'hono']) {
      const cpu = (v) => median((route === 'get' ? http[v] : http[v][route]).cpu);
      console.log(
        `${f} ${route.toUpperCase()}: ${ref} / no-op ${ratio(http, `${f}-keygate-ref`, `${f}-noop`, route).toFixed(2)}, ` +
          `this checkout / no-op ${ratio(http, `${f}-keygate`, `${f}-noop`, route).toFixed(2)}, ` +
          `this checkout / ${ref} ${ratio(http, `${f}-keygate`, `${f}-keygate-ref`, route).toFixed(2)}; server CPU µs per request: ` +
          `no-op ${cpu(`${f}-noop`).toFixed(1)}, ${ref} ${cpu(`${f}-keygate-ref`).toFixed(1)}, this checkout ${cpu(`${f}-keygate`).toFixed(1)}`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
