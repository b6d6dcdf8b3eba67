// Fastify over Redis: requests per second with per-key limits through a LeasedRateLimiter, against
// the same server without limits and with the plain RedisRateLimiter (one EVALSHA per request).
// Alternated rounds (see http.mjs). `node bench/leases-http.mjs [--rounds 5] [--seconds 5]`
import { generateKey } from 'keygate';
import { pinLoadGenerator, runHttp } from './http.mjs';

const argv = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return Number(i >= 0 ? argv[i + 1] : fallback);
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

pinLoadGenerator();
const variants = ['fastify-keygate', 'fastify-keygate-limits-notimeout', 'fastify-keygate-limits-leased'];
const out = await runHttp({
  key: generateKey({ mode: 'live' }),
  rounds: flag('rounds', 5),
  seconds: flag('seconds', 5),
  variants,
  log: (line) => console.log(line),
});
const base = median(out['fastify-keygate'].rps);
for (const v of variants) {
  const redis = out[v].redis.length ? `, ${median(out[v].redis).toFixed(3)} Redis commands per request` : '';
  console.log(
    `${v}: ${Math.round(median(out[v].rps))} req/s (${(median(out[v].rps) / base).toFixed(3)} of no limits)${redis}`,
  );
}
