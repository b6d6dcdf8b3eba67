// A quick HTTP A/B of a few server variants, for working on one adapter:
//   npm run build && node bench/ab.mjs hono-bare,hono-noop,hono-keygate [rounds]
// Prints the median requests per second and server CPU time per request of each (the full report,
// with every variant and the targets, is `npm run bench`).
import { generateKey } from 'keygate';
import { pinLoadGenerator, runHttp } from './http.mjs';

pinLoadGenerator();
const variants = (process.argv[2] ?? 'hono-bare,hono-noop,hono-keygate').split(',');
const rounds = Number(process.argv[3] ?? 4);
const out = await runHttp({ key: generateKey({ mode: 'live' }), rounds, seconds: 3, warmup: 1, variants });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [variant, r] of Object.entries(out)) {
  console.log(`${variant}: ${Math.round(median(r.rps))} req/s, ${median(r.cpu).toFixed(1)} µs CPU per request`);
}
