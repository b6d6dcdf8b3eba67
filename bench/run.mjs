// `npm run bench`: micro-benchmarks, floods, HTTP A/B and CPU profiles, written to bench/RESULTS.md
// with the raw measurements beside it (bench/RESULTS.json).
//   node bench/run.mjs            the full run (about 17 minutes on 2 cores): micro-benchmarks, floods,
//                                 the HTTP A/B (GET for every variant, POST too for the framework
//                                 path), CPU profiles, store round trips with and without leases
//                                 (bench/leases.mjs) and heap per cached key (bench/memory.mjs)
//   node bench/run.mjs --quick    tiny durations, only to keep the benchmark working (CI)
//   node bench/run.mjs --render   rewrite the report from the saved measurements, without measuring
//   --out FILE                    where to write the report (default bench/RESULTS.md)
//   --scale FILE                  the scale run to summarise (default bench/SCALE.json, from `npm run bench:scale`)
//   --only credits                only row 10's figures (credits: the micro-benchmark pair and the
//                                 round trips per billed request), at full durations unless --quick,
//                                 written to bench/CREDITS.md (raw numbers in bench/CREDITS.json)
//   --only http                   only the framework path: GET and POST-with-JSON for Express, Fastify
//                                 and Hono (bare, no-op, keygate), keygate / no-op against 0.95, and a
//                                 CPU profile of each keygate server that misses it; written to
//                                 bench/HTTP.md (raw numbers in bench/HTTP.json)
//   --rounds N, --seconds S       with --only http: N rounds of S seconds per variant and route
// Exits 1 if an invariant breaks (a malformed key reached the store, the negative cache outgrew its
// bound, a variant answered anything but 2xx); speed targets are reported, never enforced.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { generateKey } from 'keygate';
import { runCreditTrips } from './credits.mjs';
import { FRAMEWORK_VARIANTS, pinLoadGenerator, requestsOf, runHttp } from './http.mjs';
import { httpRatios, renderHttp } from './http-report.mjs';
import { runLeases } from './leases.mjs';
import { runMemory } from './memory.mjs';
import { CACHED, CREDITED, runMicro } from './micro.mjs';
import { PROFILED, runProfile } from './profile.mjs';
import { creditTargets, render, renderCredits, targets } from './report.mjs';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    render: { type: 'boolean', default: false },
    out: { type: 'string' },
    scale: { type: 'string' },
    only: { type: 'string' },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
  },
});
if (values.only !== undefined && values.only !== 'credits' && values.only !== 'http') {
  process.stderr.write(`--only takes "credits" or "http", not "${values.only}"\n`);
  process.exit(2);
}
const out = values.out ?? new URL('./RESULTS.md', import.meta.url).pathname;
const raw = `${out.replace(/\.md$/, '')}.json`;
const log = (line) => process.stderr.write(`[bench] ${line}\n`);

const QUICK = {
  microTime: 10,
  microRounds: 1,
  malformed: 20_000,
  unknown: 5_000,
  httpRounds: 1,
  httpSeconds: 0.5,
  warmup: 0.2,
  rewarm: 0.1,
  connections: 8,
  profileSeconds: 1,
  creditRequests: 20,
  leaseRequests: 50,
  memoryKeys: 1_000,
  memoryRuns: 1,
};
const FULL = {
  microTime: 400,
  microRounds: 5,
  malformed: 1_000_000,
  unknown: 1_000_000,
  httpRounds: 8,
  httpSeconds: 3,
  warmup: 2,
  rewarm: 0.5,
  connections: 32,
  profileSeconds: 4,
  creditRequests: 500,
  leaseRequests: 2000,
  memoryKeys: 100_000,
  memoryRuns: 3,
};

// CPU time the hypervisor took back between two readings of /proc/stat, in percent (0 where none).
function cpuTimes() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return { total: 0, steal: 0 };
  }
}
function stealSince(t0) {
  const t1 = cpuTimes();
  return t1.total > t0.total ? (100 * (t1.steal - t0.steal)) / (t1.total - t0.total) : 0;
}

async function measure(options) {
  const started = performance.now();
  const machine = {
    date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    cpu: os.cpus()[0]?.model ?? 'unknown CPU',
    cores: os.cpus().length,
    memory: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    steal: {},
  };
  log('micro-benchmarks');
  let t0 = cpuTimes();
  const micro = await runMicro({ time: options.microTime, rounds: options.microRounds, log });
  machine.steal.micro = stealSince(t0);
  log('credits: round trips per billed request');
  const credits = await runCreditTrips({ requests: options.creditRequests, log });
  log('floods');
  const flood = JSON.parse(
    execFileSync(
      process.execPath,
      [
        '--expose-gc',
        new URL('./flood.mjs', import.meta.url).pathname,
        String(options.malformed),
        String(options.unknown),
      ],
      { encoding: 'utf8' },
    ),
  );
  const key = generateKey({ mode: 'live' }); // one valid live key, the same for every server variant
  log('HTTP A/B');
  machine.pinned = pinLoadGenerator();
  t0 = cpuTimes();
  const http = await runHttp({
    key,
    rounds: options.httpRounds,
    seconds: options.httpSeconds,
    warmup: options.warmup,
    rewarm: options.rewarm,
    connections: options.connections,
    requests: requestsOf,
    log,
  });
  machine.steal.http = stealSince(t0);
  const profiles = {};
  // Each framework's no-op beside its keygate server: the report splits what keygate adds by owner.
  for (const variant of PROFILED) {
    log(`CPU profile of ${variant}`);
    profiles[variant] = await runProfile({
      key,
      variant,
      seconds: options.profileSeconds,
      connections: options.connections,
    });
  }
  const httpProfiles = await profileMisses(http, key, options, profiles);
  log('store round trips per request, with and without leases');
  const leases = await runLeases({ requests: options.leaseRequests, concurrency: [1, 16], log });
  log('heap per cached key');
  const memory = runMemory({ keys: options.memoryKeys, runs: options.memoryRuns, log });
  return {
    machine,
    options,
    micro,
    http,
    flood,
    profiles,
    httpProfiles,
    credits,
    leases,
    memory,
    seconds: (performance.now() - started) / 1000,
  };
}

// A CPU profile of each keygate server (and its framework's no-op beside it) that misses keygate / no-op
// ≥ 0.95 on a route, named `variant ROUTE`; GET profiles already taken (`have`) are not taken again.
async function profileMisses(http, key, options, have = {}) {
  const profiles = {};
  for (const miss of httpRatios(http).filter((r) => !r.met)) {
    for (const variant of [`${miss.framework}-noop`, `${miss.framework}-keygate`]) {
      const name = `${variant} ${miss.route.toUpperCase()}`;
      if (profiles[name]) continue;
      if (miss.route === 'get' && have[variant]) {
        profiles[name] = have[variant];
        continue;
      }
      log(`CPU profile of ${name}`);
      profiles[name] = await runProfile({
        key,
        variant,
        request: miss.route,
        seconds: options.profileSeconds,
        connections: options.connections,
      });
    }
  }
  return profiles;
}

// `--only credits`: the two micro tasks row 10's target compares, and the round trips, in a report of
// their own (bench/CREDITS.md, raw numbers in bench/CREDITS.json; --out names another .md).
if (values.only === 'credits') {
  const started = performance.now();
  const options = values.quick ? QUICK : FULL;
  const machine = {
    date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    cpu: os.cpus()[0]?.model ?? 'unknown CPU',
    cores: os.cpus().length,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    load: os.loadavg()[0].toFixed(1),
  };
  const t0 = cpuTimes();
  const micro = await runMicro({ time: options.microTime, rounds: options.microRounds, only: [CACHED, CREDITED], log });
  const steal = stealSince(t0);
  const credits = await runCreditTrips({ requests: options.creditRequests, log });
  const results = {
    machine,
    options: { ...options, quick: values.quick },
    micro,
    credits,
    steal,
    seconds: (performance.now() - started) / 1000,
  };
  const file = values.out ?? new URL('./CREDITS.md', import.meta.url).pathname;
  writeFileSync(`${file.replace(/\.md$/, '')}.json`, `${JSON.stringify(results, null, 1)}\n`);
  writeFileSync(file, renderCredits(results));
  for (const c of creditTargets({ micro, credits })) log(`${c.verdict.padEnd(6)} ${c.target}: ${c.measured}`);
  log(`wrote ${file}`);
  process.exit(0);
}

// `--only http`: the framework path, GET and POST, in a report of its own (bench/HTTP.md).
if (values.only === 'http') {
  const started = performance.now();
  const options = { ...(values.quick ? QUICK : FULL) };
  if (values.rounds) options.httpRounds = Number(values.rounds);
  if (values.seconds) options.httpSeconds = Number(values.seconds);
  const machine = {
    date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    cpu: os.cpus()[0]?.model ?? 'unknown CPU',
    cores: os.cpus().length,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    load: [os.loadavg()[0].toFixed(2)],
  };
  const key = generateKey({ mode: 'live' });
  machine.pinned = pinLoadGenerator();
  const t0 = cpuTimes();
  const http = await runHttp({
    key,
    rounds: options.httpRounds,
    seconds: options.httpSeconds,
    warmup: options.warmup,
    rewarm: options.rewarm,
    connections: options.connections,
    variants: FRAMEWORK_VARIANTS,
    requests: ['get', 'post'],
    log,
  });
  machine.steal = stealSince(t0);
  machine.load.push(os.loadavg()[0].toFixed(2));
  // Where the time goes, for each keygate server that misses the target (and its no-op beside it).
  const profiles = await profileMisses(http, key, options);
  machine.seconds = (performance.now() - started) / 1000;
  const results = { machine, options: { ...options, quick: values.quick }, http, profiles };
  const file = values.out ?? new URL('./HTTP.md', import.meta.url).pathname;
  writeFileSync(`${file.replace(/\.md$/, '')}.json`, `${JSON.stringify(results, null, 1)}\n`);
  writeFileSync(file, renderHttp(results));
  for (const r of httpRatios(http)) {
    log(
      `${r.met ? 'met   ' : 'MISSED'} ${r.framework} ${r.route.toUpperCase()} keygate / no-op ≥ 0.95: ${r.ratio.toFixed(2)}`,
    );
  }
  log(`wrote ${file}`);
  process.exit(0);
}

const results = values.render
  ? JSON.parse(readFileSync(raw, 'utf8'))
  : await measure({ quick: values.quick, ...(values.quick ? QUICK : FULL) });
if (!values.render) writeFileSync(raw, `${JSON.stringify(results, null, 1)}\n`);
const scaleFile = values.scale ?? new URL('./SCALE.json', import.meta.url).pathname;
const scale = existsSync(scaleFile) ? JSON.parse(readFileSync(scaleFile, 'utf8')) : undefined;
writeFileSync(out, render(results, scale));
const checks = targets({ ...results, scale });
for (const c of checks) log(`${c.ok ? 'met   ' : 'MISSED'} ${c.target}: ${c.measured}`);
log(`wrote ${out}`);
const broken = checks.filter((c) => !c.ok && (c.target.includes('lookups') || c.target.includes('negative cache')));
if (broken.length > 0) process.exit(1);
