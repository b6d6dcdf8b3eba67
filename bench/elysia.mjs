// `node bench/elysia.mjs` (after `npm run build` and `npm ci --prefix test/matrix/runtimes`, which
// installs Bun): Elysia on Bun bare, with a no-op scoped hook, and with keygate's plugin (a warm
// CachedKeyStore, the key allow-listed for 127.0.0.1, read through `socketAddress`); a GET and a POST
// with a JSON body each, loaded by autocannon from Node. Writes bench/ELYSIA.md. BENCH_ROUNDS and
// BENCH_SECONDS shorten or lengthen the run.
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { report, runFrameworkAb } from './ab.frameworks.mjs';

const bun = new URL('../test/matrix/runtimes/node_modules/.bin/bun', import.meta.url).pathname;
if (!existsSync(bun)) throw new Error(`Bun not found at ${bun}: run \`npm ci --prefix test/matrix/runtimes\``);
const result = await runFrameworkAb({
  command: [bun],
  script: new URL('./elysia-server.mjs', import.meta.url).pathname,
  variants: ['elysia-bare', 'elysia-noop', 'elysia-keygate'],
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  seconds: Number(process.env.BENCH_SECONDS ?? 3),
});
const bunVersion = execFileSync(bun, ['--version'], { encoding: 'utf8' }).trim();
const { version } = (await import('elysia/package.json', { with: { type: 'json' } })).default;
const text = report(
  { title: 'keygate on Elysia (Bun)', runtime: `Bun ${bunVersion}, Elysia ${version}`, ...result },
  'elysia-bare',
  '`bench/elysia.mjs`: the cost of `keygate/elysia` on an Elysia app served by Bun, next to the same app without it and with a scoped hook that does nothing.',
);
writeFileSync(new URL('./ELYSIA.md', import.meta.url), text);
console.log(text);
