// HTTP A/B: every server variant in its own process on 127.0.0.1, loaded by autocannon from this
// process, in rounds that alternate the variants (A B A B ...; every other round in reverse order).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { ROUTE } from './fixture.mjs';

/** Variants in run order, and the comparisons the report makes (numerator / denominator). */
export const VARIANTS = [
  'express-bare',
  'express-noop',
  'express-keygate',
  'express-peer',
  'fastify-bare',
  'fastify-noop',
  'fastify-keygate',
  'fastify-keygate-limits',
  'fastify-keygate-limits-notimeout',
  'hono-bare',
  'hono-noop',
  'hono-keygate',
];
export const COMPARISONS = [
  ['express-keygate', 'express-bare', 0.93],
  ['fastify-keygate', 'fastify-bare', 0.93],
  ['hono-keygate', 'hono-bare', 0.93],
  ['express-keygate', 'express-peer', 1.6],
];

/** Variants that count their Redis commands, and the route (outside keygate) that reports the count. */
export const REDIS_COUNTERS = {
  'fastify-keygate-limits': '/bench/redis-commands',
  'fastify-keygate-limits-notimeout': '/bench/redis-commands',
  'fastify-keygate-limits-leased': '/bench/redis-commands',
};

let pinned = false;

/**
 * With two or more CPUs and taskset (util-linux), servers started from now on run on CPU 0 and this
 * process (the load generator) on CPU 1, so neither steals the other's core. Returns whether it could.
 */
export function pinLoadGenerator() {
  if (os.cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
    pinned = true;
  } catch {
    pinned = false;
  }
  return pinned;
}

async function startServer(variant, key) {
  const argv = [process.execPath, new URL('./server.mjs', import.meta.url).pathname, variant];
  const [command, ...args] = pinned ? ['taskset', '-c', '0', ...argv] : argv;
  const child = spawn(command, args, {
    env: { ...process.env, BENCH_KEY: key },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = await Promise.race([
    once(createInterface({ input: child.stdout }), 'line'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`server ${variant} exited with ${code}`))),
  ]);
  return { variant, child, url: `http://127.0.0.1:${JSON.parse(line).port}${ROUTE}` };
}

// CPU time (user + system) a process has used, in microseconds, from /proc (Linux); null elsewhere.
const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux
function cpuMicros(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return null;
  }
}

/** Redis commands the server has sent so far, or null for a variant that does not count them. */
async function redisCommands(server) {
  const route = REDIS_COUNTERS[server.variant];
  if (!route) return null;
  const res = await fetch(new URL(route, server.url));
  return (await res.json()).commands;
}

function load(url, key, seconds, connections) {
  return autocannon({ url, connections, duration: seconds, headers: { 'x-api-key': key } });
}

/** Refuses to measure a server that does not answer the key with 200 (and, with auth, no key with 401). */
async function verify(server, key) {
  const ok = await fetch(server.url, { headers: { 'x-api-key': key } });
  const none = await fetch(server.url);
  const wantNone = server.variant.endsWith('-bare') || server.variant.endsWith('-noop') ? 200 : 401;
  if (ok.status !== 200 || none.status !== wantNone) {
    throw new Error(`${server.variant}: key -> ${ok.status}, no key -> ${none.status} (want 200, ${wantNone})`);
  }
}

/**
 * Runs `rounds` alternated rounds of `seconds` each per variant (after a warm-up of `warmup` seconds)
 * and returns `{ [variant]: { rps: number[], p50: number[], cpu: number[], redis: number[] } }`: one
 * entry per round (requests per second, median latency in ms, the server's CPU time per request in
 * µs, and for the variants of `REDIS_COUNTERS` the Redis commands it sent per request).
 */
export async function runHttp({
  key,
  rounds = 5,
  seconds = 5,
  warmup = 2,
  connections = 32,
  log = () => {},
  variants = VARIANTS,
}) {
  const servers = [];
  try {
    for (const v of variants) servers.push(await startServer(v, key));
    for (const s of servers) await verify(s, key);
    for (const s of servers) await load(s.url, key, warmup, connections);
    const out = Object.fromEntries(variants.map((v) => [v, { rps: [], p50: [], cpu: [], redis: [] }]));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        const commandsBefore = await redisCommands(s);
        const cpuBefore = cpuMicros(s.child.pid);
        const res = await load(s.url, key, seconds, connections);
        const cpuAfter = cpuMicros(s.child.pid);
        const commandsAfter = await redisCommands(s);
        if (commandsBefore !== null) out[s.variant].redis.push((commandsAfter - commandsBefore) / res.requests.total);
        const bad = res.non2xx + res.errors + res.timeouts;
        if (bad > 0) throw new Error(`${s.variant}: ${bad} requests did not get a 2xx answer`);
        const rps = res.requests.total / ((res.finish - res.start) / 1000);
        out[s.variant].rps.push(rps);
        out[s.variant].p50.push(res.latency.p50);
        if (cpuBefore !== null && cpuAfter !== null)
          out[s.variant].cpu.push((cpuAfter - cpuBefore) / res.requests.total);
        log(`round ${r + 1}/${rounds} ${s.variant}: ${Math.round(rps)} req/s`);
      }
    }
    return out;
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
  }
}
