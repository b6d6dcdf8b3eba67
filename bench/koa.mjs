// `node bench/koa.mjs` (after `npm run build`): Koa 3 bare, with a no-op middleware, and with keygate's
// `apiKeyAuth` (a warm CachedKeyStore, the key allow-listed for 127.0.0.1); a GET and a POST with a
// JSON body each. Writes bench/KOA.md. BENCH_ROUNDS and BENCH_SECONDS shorten or lengthen the run.
import { writeFileSync } from 'node:fs';
import { report, runFrameworkAb } from './ab.frameworks.mjs';

const result = await runFrameworkAb({
  command: [process.execPath],
  script: new URL('./koa-server.mjs', import.meta.url).pathname,
  variants: ['koa-bare', 'koa-noop', 'koa-keygate'],
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  seconds: Number(process.env.BENCH_SECONDS ?? 3),
});
const { version } = (await import('koa/package.json', { with: { type: 'json' } })).default;
const text = report(
  { title: 'keygate on Koa', runtime: `Node ${process.version}, Koa ${version}`, ...result },
  'koa-bare',
  '`bench/koa.mjs`: the cost of `keygate/koa` on a Koa app, next to the same app without it and with a middleware that only calls `next()`.',
);
writeFileSync(new URL('./KOA.md', import.meta.url), text);
console.log(text);
