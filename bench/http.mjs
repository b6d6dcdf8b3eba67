// HTTP A/B: every server variant in its own process on 127.0.0.1, loaded by autocannon from this
// process, in rounds that alternate the variants (A B A B ...; every other round in reverse order).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { POST_BODY, POST_ROUTE, ROUTE } from './fixture.mjs';

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
  'fastify-keygate-limits-memory',
  'fastify-keygate-limits-leased',
  'fastify-keygate-credits-memory',
  'fastify-keygate-credits-redis',
  'fastify-keygate-credits-redis-leased',
  'fastify-keygate-credits-pg',
  'fastify-keygate-credits-pg-leased',
  'hono-bare',
  'hono-noop',
  'hono-keygate',
];
/** The variants of the framework-path A/B (`node bench/run.mjs --only http`): bare, no-op, keygate. */
export const FRAMEWORK_VARIANTS = [
  'express-bare',
  'express-noop',
  'express-keygate',
  'fastify-bare',
  'fastify-noop',
  'fastify-keygate',
  'hono-bare',
  'hono-noop',
  'hono-keygate',
];

/** The requests a variant can be loaded with: GET ROUTE, and POST POST_ROUTE with a small JSON body. */
export const REQUESTS = {
  get: { method: 'GET', path: ROUTE },
  post: { method: 'POST', path: POST_ROUTE, body: POST_BODY, headers: { 'content-type': 'application/json' } },
};

export const COMPARISONS = [
  ['express-keygate', 'express-bare', 0.93],
  ['fastify-keygate', 'fastify-bare', 0.93],
  ['hono-keygate', 'hono-bare', 0.93],
  ['express-keygate', 'express-peer', 1.6],
];

/**
 * Variants that count their store round trips (Redis commands; for the PostgreSQL ledger, statements),
 * and the route (outside keygate) that reports the count.
 */
export const REDIS_COUNTERS = {
  'fastify-keygate-limits': '/bench/redis-commands',
  'fastify-keygate-limits-notimeout': '/bench/redis-commands',
  'fastify-keygate-limits-leased': '/bench/redis-commands',
  'fastify-keygate-credits-redis': '/bench/redis-commands',
  'fastify-keygate-credits-redis-leased': '/bench/redis-commands',
  'fastify-keygate-credits-pg': '/bench/redis-commands',
  'fastify-keygate-credits-pg-leased': '/bench/redis-commands',
};

/** The requests of the full run: GET for every variant, and POST too for the framework-path variants. */
export const requestsOf = (variant) => (FRAMEWORK_VARIANTS.includes(variant) ? ['get', 'post'] : ['get']);

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
  const origin = `http://127.0.0.1:${JSON.parse(line).port}`;
  return { variant, child, origin, url: `${origin}${ROUTE}` };
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

// Busy and total jiffies of the whole machine (every CPU), from /proc/stat; null elsewhere.
function machineJiffies() {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    const n = fields.map(Number);
    const idle = n[3] + n[4]; // idle + iowait
    const total = n.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/**
 * Waits until the machine is quiet: less than `busyShare` of its CPU time busy over a quarter-second
 * window, at most `maxMs`. A store that another variant loaded goes on working after its load stops
 * (PostgreSQL and Redis were seen busy, a fifth of a core and more, for seconds after the plain
 * ledgers' windows): measured from then, the next variant would pay for it. Returns the milliseconds waited (null where /proc/stat is
 * missing: nothing to wait for).
 */
export async function waitForQuiet({ busyShare = 0.1, maxMs = 10_000 } = {}) {
  const started = Date.now();
  let before = machineJiffies();
  if (before === null) return null;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const after = machineJiffies();
    const total = after.total - before.total;
    if (total > 0 && (after.busy - before.busy) / total < busyShare) return Date.now() - started;
    if (Date.now() - started >= maxMs) return Date.now() - started;
    before = after;
  }
}

/** Redis commands the server has sent so far, or null for a variant that does not count them. */
async function redisCommands(server) {
  const route = REDIS_COUNTERS[server.variant];
  if (!route) return null;
  const res = await fetch(new URL(route, server.url));
  return (await res.json()).commands;
}

function load(server, key, seconds, connections, request = REQUESTS.get) {
  return autocannon({
    url: `${server.origin}${request.path}`,
    method: request.method,
    body: request.body,
    connections,
    duration: seconds,
    headers: { ...request.headers, 'x-api-key': key },
  });
}

/** Refuses to measure a server that does not answer the key with 200 (and, with auth, no key with 401). */
async function verify(server, key, request) {
  const url = `${server.origin}${request.path}`;
  const init = { method: request.method, body: request.body };
  const ok = await fetch(url, { ...init, headers: { ...request.headers, 'x-api-key': key } });
  const none = await fetch(url, { ...init, headers: request.headers });
  const wantNone = server.variant.endsWith('-bare') || server.variant.endsWith('-noop') ? 200 : 401;
  if (ok.status !== 200 || none.status !== wantNone) {
    throw new Error(`${server.variant}: key -> ${ok.status}, no key -> ${none.status} (want 200, ${wantNone})`);
  }
  if (request.body && (await ok.json()).email !== JSON.parse(request.body).email) {
    throw new Error(`${server.variant}: ${request.method} ${request.path} did not answer with the body's address`);
  }
}

/**
 * Runs `rounds` alternated rounds of `seconds` each per variant (after a warm-up of `warmup` seconds;
 * each measured window waits for a quiet machine and follows `rewarm` seconds of unmeasured load) and
 * returns `{ [variant]: { rps: number[], p50: number[], cpu: number[], redis: number[], quietMs: number[] } }`:
 * one entry per round (requests per second, median latency in ms, the server's CPU time per request in
 * µs, for the variants of `REDIS_COUNTERS` the store round trips it sent per request, and how long the
 * round waited for the machine to go quiet). `requests`
 * names the requests of `REQUESTS` each variant is loaded with in every round (default: GET only), or
 * is a function of the variant that names them (see `requestsOf`); the GET figures are the entry
 * itself, each other request's are under its name (`post: { rps, p50, cpu }`).
 */
export async function runHttp({
  key,
  rounds = 5,
  seconds = 5,
  warmup = 2,
  rewarm = 0.5,
  connections = 32,
  log = () => {},
  variants = VARIANTS,
  requests = ['get'],
}) {
  const servers = [];
  const routes = typeof requests === 'function' ? requests : () => requests;
  try {
    for (const v of variants) servers.push(await startServer(v, key));
    for (const s of servers) for (const name of routes(s.variant)) await verify(s, key, REQUESTS[name]);
    for (const s of servers) {
      for (const name of routes(s.variant)) await load(s, key, warmup, connections, REQUESTS[name]);
    }
    const out = Object.fromEntries(variants.map((v) => [v, { rps: [], p50: [], cpu: [], redis: [], quietMs: [] }]));
    for (const v of variants)
      for (const name of routes(v).filter((n) => n !== 'get'))
        out[v][name] = { rps: [], p50: [], cpu: [], quietMs: [] };
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        for (const name of r % 2 === 0 ? routes(s.variant) : [...routes(s.variant)].reverse()) {
          const into = name === 'get' ? out[s.variant] : out[s.variant][name];
          // Each measured window starts on a quiet machine, with the server already answering this
          // request: what another variant left running, and the first second of new connections
          // after the server sat idle through the others' windows, are not this variant's cost.
          const quietMs = await waitForQuiet();
          if (quietMs !== null) into.quietMs.push(quietMs);
          if (rewarm > 0) await load(s, key, rewarm, connections, REQUESTS[name]);
          const commandsBefore = name === 'get' ? await redisCommands(s) : null;
          const cpuBefore = cpuMicros(s.child.pid);
          const res = await load(s, key, seconds, connections, REQUESTS[name]);
          const cpuAfter = cpuMicros(s.child.pid);
          if (commandsBefore !== null)
            into.redis.push(((await redisCommands(s)) - commandsBefore) / res.requests.total);
          const bad = res.non2xx + res.errors + res.timeouts;
          if (bad > 0) throw new Error(`${s.variant} ${name}: ${bad} requests did not get a 2xx answer`);
          const rps = res.requests.total / ((res.finish - res.start) / 1000);
          into.rps.push(rps);
          into.p50.push(res.latency.p50);
          if (cpuBefore !== null && cpuAfter !== null) into.cpu.push((cpuAfter - cpuBefore) / res.requests.total);
          log(`round ${r + 1}/${rounds} ${s.variant} ${name.toUpperCase()}: ${Math.round(rps)} req/s`);
        }
      }
    }
    return out;
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
  }
}
