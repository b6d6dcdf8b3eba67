// A CPU profile of the Express server with keygate under load: `node --cpu-prof` on the server
// process while autocannon sends valid requests, summarised by who spends the time.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { REQUESTS } from './http.mjs';

// Where a frame's code lives: keygate's build, the key's SHA-256 (Node's one-shot `crypto.hash`, which
// keygate calls; an ETag's `createHash` is other hashing), socket writes (the kernel's loopback send,
// which also wakes the load generator), the rest of Node, a package, or V8 itself (GC, idle, compiled
// code without a script).
/** The servers `npm run bench` profiles: each framework's no-op middleware and keygate. */
export const PROFILED = [
  'express-noop',
  'express-keygate',
  'fastify-noop',
  'fastify-keygate',
  'hono-noop',
  'hono-keygate',
];

export const SHA256_OWNER = 'node:crypto (SHA-256 of the key)';
const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString']);
function ownerOf(functionName, url) {
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1];
  if (url.includes('/dist/')) return 'keygate';
  if (url.startsWith('node:internal/crypto'))
    return functionName === 'hash' ? SHA256_OWNER : 'node:crypto (other hashing)';
  if (url.startsWith('node:')) return 'Node.js (http, net, streams)';
  if (url.includes('/bench/')) return 'benchmark server';
  if (functionName.startsWith('(')) return functionName; // (garbage collector), (program)
  if (SOCKET_WRITES.has(functionName)) return 'socket writes (syscalls)';
  return 'native code (timers, parsing)';
}

/**
 * A `node --cpu-prof` profile of `variant` under `seconds` of load (`request`: `get` or `post`, see
 * REQUESTS in http.mjs): `{ profile, requests }`, the V8 profile as written and the requests served while it ran.
 */
export async function captureProfile({ key, variant, seconds = 5, connections = 32, request = 'get' }) {
  const dir = await mkdtemp(join(tmpdir(), 'keygate-prof-'));
  try {
    const server = new URL('./server.mjs', import.meta.url).pathname;
    const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, server, variant], {
      env: { ...process.env, BENCH_KEY: key },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = await once(createInterface({ input: child.stdout }), 'line');
    const { method, path, body, headers } = REQUESTS[request];
    const url = `http://127.0.0.1:${JSON.parse(line).port}${path}`;
    const load = await autocannon({
      url,
      method,
      body,
      connections,
      duration: seconds,
      headers: { ...headers, 'x-api-key': key },
    });
    child.kill('SIGTERM');
    await once(child, 'exit');
    const [file] = await readdir(dir);
    if (!file) throw new Error('the server wrote no CPU profile');
    return { profile: JSON.parse(await readFile(join(dir, file), 'utf8')), requests: load.requests.total };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Profiles `variant` for `seconds` under load. Returns `{ owners, keygate }` (each entry with its percent
 * of busy time and µs per request), `samples`, `idle` (percent of wall time), `requests` and `busyPerRequest` (µs).
 */
export async function runProfile({ key, variant = 'express-keygate', seconds = 5, connections = 32, request }) {
  const { profile, requests } = await captureProfile({ key, variant, seconds, connections, request });
  return summarise(profile, requests);
}

function summarise(profile, requests) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const owners = new Map();
  const keygate = new Map();
  let busy = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    const dt = profile.timeDeltas[i] ?? 0;
    if (functionName === '(idle)') {
      idle += dt;
      return;
    }
    busy += dt;
    const owner = ownerOf(functionName, url);
    owners.set(owner, (owners.get(owner) ?? 0) + dt);
    if (owner === 'keygate') {
      const name = `${functionName || '(anonymous)'} (${url.split('/dist/')[1]}:${lineNumber + 1})`;
      keygate.set(name, (keygate.get(name) ?? 0) + dt);
    }
  });
  // Profile times are in microseconds: per owner, its share of busy time and its CPU time per request.
  const pct = (m) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .map(([name, t]) => ({ name, percent: (100 * t) / busy, perRequest: t / requests }));
  return {
    owners: pct(owners),
    keygate: pct(keygate),
    samples: profile.samples.length,
    idle: (100 * idle) / (idle + busy),
    requests,
    busyPerRequest: busy / requests,
  };
}
