// A/B rounds for one framework's variants (bare, a no-op middleware, keygate), each server in its own
// process on 127.0.0.1, loaded by autocannon from this process: a GET and a POST with a small JSON body
// per variant, in rounds that alternate the variants (every other round in reverse). bench/koa.mjs and
// bench/elysia.mjs use it; the servers print `{"port":N}` once listening and answer:
//   GET  /v1/ping   BODY (bench/fixture.mjs) as JSON
//   POST /v1/echo   {"count":N}, N the length of the `emails` list of the JSON body
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { generateKey } from 'keygate';
import { pinLoadGenerator } from './http.mjs';

/** The two requests every variant is loaded with. */
export const REQUESTS = {
  get: { path: '/v1/ping', method: 'GET' },
  post: {
    path: '/v1/echo',
    method: 'POST',
    body: JSON.stringify({ emails: ['ada@example.com', 'grace@example.com', 'alan@example.com'] }),
    headers: { 'content-type': 'application/json' },
  },
};

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function start(command, script, variant, key, pinned) {
  const argv = [...command, script, variant];
  const [bin, ...args] = pinned ? ['taskset', '-c', '0', ...argv] : argv;
  const child = spawn(bin, args, { env: { ...process.env, BENCH_KEY: key }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await Promise.race([
    once(createInterface({ input: child.stdout }), 'line'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`server ${variant} exited with ${code}`))),
  ]);
  return { variant, child, base: `http://127.0.0.1:${JSON.parse(line).port}` };
}

/** Refuses to measure a server that does not answer the key with 200 (and keygate, no key with 401). */
async function verify(server, key) {
  for (const { path, method, body, headers } of Object.values(REQUESTS)) {
    const ok = await fetch(server.base + path, { method, body, headers: { ...headers, 'x-api-key': key } });
    const none = await fetch(server.base + path, { method, body, headers });
    const wantNone = server.variant.endsWith('-keygate') ? 401 : 200;
    if (ok.status !== 200 || none.status !== wantNone) {
      throw new Error(`${server.variant} ${method}: key -> ${ok.status}, no key -> ${none.status}`);
    }
  }
}

function load(server, request, key, seconds, connections) {
  const { path, method, body, headers } = request;
  return autocannon({
    url: server.base + path,
    method,
    body,
    headers: { ...headers, 'x-api-key': key },
    connections,
    duration: seconds,
  });
}

/**
 * Runs the rounds and returns `{ host, results: { [variant]: { [request]: { rps, p50 } } } }` with the
 * median requests per second and median latency (ms) over the rounds, and every round's figure.
 */
export async function runFrameworkAb({
  command,
  script,
  variants,
  rounds = 3,
  seconds = 3,
  warmup = 1,
  connections = 32,
  log = console.error,
}) {
  const pinned = pinLoadGenerator();
  const key = generateKey({ mode: 'live' });
  const servers = [];
  try {
    for (const variant of variants) servers.push(await start(command, script, variant, key, pinned));
    for (const server of servers) await verify(server, key);
    const rows = Object.fromEntries(
      variants.map((v) => [v, Object.fromEntries(Object.keys(REQUESTS).map((r) => [r, { rps: [], p50: [] }]))]),
    );
    for (const server of servers) {
      for (const request of Object.values(REQUESTS)) await load(server, request, key, warmup, connections);
    }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        for (const [name, request] of Object.entries(REQUESTS)) {
          const res = await load(server, request, key, seconds, connections);
          const bad = res.non2xx + res.errors + res.timeouts;
          if (bad > 0) throw new Error(`${server.variant} ${name}: ${bad} requests did not get a 2xx answer`);
          const rps = res.requests.total / ((res.finish - res.start) / 1000);
          rows[server.variant][name].rps.push(rps);
          rows[server.variant][name].p50.push(res.latency.p50);
          log(`round ${round + 1}/${rounds} ${server.variant} ${name}: ${Math.round(rps)} req/s`);
        }
      }
    }
    const cpu = os.cpus();
    return {
      host: `${cpu[0]?.model ?? 'unknown CPU'} x${cpu.length}, ${os.platform()} ${os.release()}, load generator ${pinned ? 'and servers on separate cores (taskset)' : 'sharing cores with the servers'}`,
      settings: { rounds, seconds, warmup, connections },
      rows,
    };
  } finally {
    for (const server of servers) server.child.kill('SIGTERM');
  }
}

/** The report: one table per request, medians over the rounds, each variant as a ratio of the bare one. */
export function report({ title, runtime, host, settings, rows }, bare, intro) {
  const lines = [
    `# ${title}`,
    '',
    intro,
    '',
    `Host: ${host}. Runtime: ${runtime}. ${settings.rounds} rounds of ${settings.seconds} s per variant and request (after ${settings.warmup} s of warm-up), ${settings.connections} connections, autocannon from Node on the same machine. Short runs on a shared machine: read the ratios, not the absolute figures.`,
  ];
  for (const request of Object.keys(REQUESTS)) {
    const { method, path } = REQUESTS[request];
    const base = median(rows[bare][request].rps);
    lines.push(
      '',
      `## ${method} ${path}`,
      '',
      '| variant | req/s (median) | vs bare | p50 latency (ms) | req/s per round |',
    );
    lines.push('| --- | ---: | ---: | ---: | --- |');
    for (const [variant, byRequest] of Object.entries(rows)) {
      const { rps, p50 } = byRequest[request];
      const m = median(rps);
      lines.push(
        `| ${variant} | ${Math.round(m)} | ${(m / base).toFixed(2)} | ${median(p50)} | ${rps.map(Math.round).join(', ')} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
