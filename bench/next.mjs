// `node bench/next.mjs`: what keygate/next costs a real Next.js app. Builds bench/next-app three times
// (offline, into bench/.build): without middleware, with its gate as `middleware.ts` (Edge runtime)
// and as `proxy.ts` (Node.js runtime). Then `next start` serves five variants at once, each in its own
// process pinned to CPU 0 (autocannon here, on CPU 1): no middleware, a no-op middleware and keygate's
// middleware on each runtime. Rounds alternate the variants (every other round reversed), on a GET
// route handler and a POST one that parses a JSON body; the report gives medians and ratios.
//   --rounds N (default 5)  --seconds S (default 5)  --connections C (default 32)  --out FILE (bench/NEXT.md)
// Needs `npm run build` (the app imports keygate's dist/). Exits 1 if a variant answers anything but 2xx.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { generateKey } from 'keygate';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    out: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const CONNECTIONS = Number(values.connections);
const ROOT = new URL('..', import.meta.url).pathname;
const OUT = values.out ?? join(ROOT, 'bench/NEXT.md');
const NEXT = join(ROOT, 'node_modules/next/dist/bin/next');
const BUILD = join(ROOT, 'bench/.build');
const log = (line) => process.stderr.write(`[bench:next] ${line}\n`);

if (!existsSync(join(ROOT, 'dist/next.js'))) throw new Error('dist/ is missing: run `npm run build` first');

const KEY = generateKey({ mode: 'live' });
const SIGNING = `bench-${crypto.randomUUID()}-${crypto.randomUUID()}`;
const ENV = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' };

/** Builds, one folder each: `gate` null (no middleware) or the file name the gate takes. */
const BUILDS = { none: null, edge: 'middleware.ts', node: 'proxy.ts' };
/** Variant -> [build, BENCH_GATE]. */
const VARIANTS = {
  none: ['none', ''],
  'edge-noop': ['edge', 'noop'],
  'edge-keygate': ['edge', 'keygate'],
  'node-noop': ['node', 'noop'],
  'node-keygate': ['node', 'keygate'],
};
const ROUTES = {
  GET: { path: '/v1/ping', method: 'GET' },
  POST: {
    path: '/v1/echo',
    method: 'POST',
    body: JSON.stringify({ email: 'ada@example.com' }),
    headers: { 'content-type': 'application/json' },
  },
};

let unshare = false;
try {
  execFileSync('unshare', ['-n', 'true'], { stdio: 'ignore' });
  unshare = true;
} catch {}

function build(name, gate) {
  const dir = join(BUILD, `next-${name}`);
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(ROOT, 'bench/next-app'), dir, { recursive: true });
  if (gate) renameSync(join(dir, 'gate.ts'), join(dir, gate));
  else rmSync(join(dir, 'gate.ts'));
  const started = performance.now();
  const argv = [process.execPath, NEXT, 'build'];
  const [command, ...args] = unshare ? ['unshare', '-n', ...argv] : argv;
  execFileSync(command, args, { cwd: dir, env: ENV, stdio: ['ignore', 'ignore', 'inherit'] });
  log(`built ${name} in ${((performance.now() - started) / 1000).toFixed(0)} s${unshare ? ' (offline)' : ''}`);
  return dir;
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const pinned = os.cpus().length >= 2 && pin();
function pin() {
  try {
    execFileSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function start(variant, dir, gate) {
  const port = await freePort();
  const argv = [process.execPath, NEXT, 'start', '-p', String(port), '-H', '127.0.0.1'];
  const [command, ...args] = pinned ? ['taskset', '-c', '0', ...argv] : argv;
  const child = spawn(command, args, {
    cwd: dir,
    env: { ...ENV, BENCH_GATE: gate, BENCH_KEY: KEY, BENCH_SIGNING_SECRET: SIGNING },
    stdio: 'ignore',
    detached: true,
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${variant}: next start exited with ${child.exitCode}`);
    if (
      await fetch(`${base}/`).then(
        () => true,
        () => false,
      )
    )
      return { variant, child, base, gate };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${variant}: next start did not answer within 30 s`);
}

/** Refuses to measure a variant that does not answer the key with 200 and, behind keygate, no key with 401. */
async function verify(server) {
  const ok = await fetch(`${server.base}/v1/ping`, { headers: { 'x-api-key': KEY } });
  const none = await fetch(`${server.base}/v1/ping`);
  const want = server.gate === 'keygate' ? 401 : 200;
  if (ok.status !== 200 || none.status !== want) {
    throw new Error(`${server.variant}: key -> ${ok.status}, no key -> ${none.status} (want 200, ${want})`);
  }
}

function load(server, route, seconds) {
  const { path, ...rest } = route;
  return autocannon({
    url: `${server.base}${path}`,
    connections: CONNECTIONS,
    duration: seconds,
    ...rest,
    headers: { ...rest.headers, 'x-api-key': KEY },
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const startedAt = new Date();
const loadBefore = os.loadavg()[0];
const dirs = {};
for (const [name, gate] of Object.entries(BUILDS)) dirs[name] = build(name, gate);
const servers = [];
const rps = Object.fromEntries(Object.keys(VARIANTS).map((v) => [v, { GET: [], POST: [] }]));
try {
  for (const [variant, [buildName, gate]] of Object.entries(VARIANTS)) {
    servers.push(await start(variant, dirs[buildName], gate));
  }
  for (const s of servers) await verify(s);
  for (const s of servers) for (const route of Object.values(ROUTES)) await load(s, route, WARMUP);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? servers : [...servers].reverse();
    for (const s of order) {
      for (const [name, route] of Object.entries(ROUTES)) {
        const res = await load(s, route, SECONDS);
        const bad = res.non2xx + res.errors + res.timeouts;
        if (bad > 0) throw new Error(`${s.variant} ${name}: ${bad} requests did not get a 2xx answer`);
        const perSecond = res.requests.total / ((res.finish - res.start) / 1000);
        rps[s.variant][name].push(perSecond);
        log(`round ${r + 1}/${ROUNDS} ${s.variant} ${name}: ${Math.round(perSecond)} req/s`);
      }
    }
  }
} finally {
  for (const s of servers) if (s.child.exitCode === null) process.kill(-s.child.pid, 'SIGTERM');
  rmSync(BUILD, { recursive: true, force: true });
}

const next = JSON.parse(readFileSync(join(ROOT, 'node_modules/next/package.json'), 'utf8')).version;
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const host = `${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB; Node ${process.version} (${process.platform} ${process.arch}); Next.js ${next}`;
const m = (v, route) => median(rps[v][route]);
const fmt = (x) => Math.round(x).toLocaleString('en-US');
const ratio = (a, b) => `${(a / b).toFixed(2)} ×`;
const lines = [
  '# keygate/next: what the middleware costs a Next.js app',
  '',
  `Written by \`node bench/next.mjs\` on ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC. Host: ${host}.`,
  `${ROUNDS} alternated rounds of ${SECONDS} s per variant and route (after ${WARMUP} s of warm-up), ${CONNECTIONS} connections, over 127.0.0.1;`,
  `each \`next start\` in its own process${pinned ? ' pinned to CPU 0, autocannon pinned to CPU 1' : ''}. Every request carries a valid live key;`,
  "keygate's store is a warm `CachedKeyStore`, and behind keygate the route handler also verifies the signed view",
  '(`apiKeyFromHeaders`), as a real route would. Figures on a shared 2-core machine drift by tens of percent from one',
  `minute to the next: compare within this run only. Load average (1 min) ${loadBefore.toFixed(1)} at the start,`,
  `${os.loadavg()[0].toFixed(1)} at the end: other work shared the ${os.cpus().length} cores.`,
  '',
  '## Requests per second (medians)',
  '',
  '| variant | GET route handler | POST JSON route handler |',
  '| --- | ---: | ---: |',
  ...Object.keys(VARIANTS).map((v) => `| ${v} | ${fmt(m(v, 'GET'))} | ${fmt(m(v, 'POST'))} |`),
  '',
  '## Ratios',
  '',
  '| comparison | GET | POST |',
  '| --- | ---: | ---: |',
  ...[
    ['edge-noop', 'none', 'a no-op Edge middleware / no middleware'],
    ['edge-keygate', 'edge-noop', 'keygate on Edge / a no-op Edge middleware'],
    ['edge-keygate', 'none', 'keygate on Edge / no middleware'],
    ['node-noop', 'none', 'a no-op Node.js middleware / no middleware'],
    ['node-keygate', 'node-noop', 'keygate on Node.js / a no-op Node.js middleware'],
    ['node-keygate', 'none', 'keygate on Node.js / no middleware'],
  ].map(([a, b, label]) => `| ${label} | ${ratio(m(a, 'GET'), m(b, 'GET'))} | ${ratio(m(a, 'POST'), m(b, 'POST'))} |`),
  '',
  '## Every round (req/s)',
  '',
  '| variant | GET | POST |',
  '| --- | --- | --- |',
  ...Object.keys(VARIANTS).map(
    (v) => `| ${v} | ${rps[v].GET.map(fmt).join(', ')} | ${rps[v].POST.map(fmt).join(', ')} |`,
  ),
  '',
];
writeFileSync(OUT, lines.join('\n'));
log(`wrote ${OUT}`);
