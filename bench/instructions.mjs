// Instructions per request of a benchmark server's main thread, counted by valgrind (callgrind): a
// figure a loaded machine moves far less than requests per second (a no-op server repeats within 1%, a
// keygate server within about 5%: timers fire per millisecond of wall time, which valgrind stretches,
// so it resolves thousands of instructions per request, not hundreds). The server (bench/server.mjs)
// runs under callgrind with instrumentation off until it listens; then `--warm` requests tier up its
// code, the counters are zeroed, `--requests` requests are sent (autocannon, 4 connections, the same
// valid key as every variant) and the counts dumped. Compare a keygate variant with its framework's
// no-op: the difference is what keygate adds per request. Requires valgrind; about a minute per run.
//
//   node bench/instructions.mjs <variant> [get|post] [--warm 10000] [--requests 5000]
//   BENCH_SERVER=path/to/server.mjs   another revision's server (and, through it, its dist/)
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { generateKey } from 'keygate';
import { REQUESTS } from './http.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { warm: { type: 'string', default: '10000' }, requests: { type: 'string', default: '5000' } },
});
const [variant, route = 'get'] = positionals;
if (!variant || !REQUESTS[route]) {
  process.stderr.write('usage: node bench/instructions.mjs <variant> [get|post] [--warm N] [--requests N]\n');
  process.exit(2);
}
const key = generateKey({ mode: 'live' });
const dir = mkdtempSync(join(tmpdir(), 'keygate-callgrind-'));
const server = process.env.BENCH_SERVER ?? new URL('./server.mjs', import.meta.url).pathname;
// JIT code needs --smc-check; one output file per thread, so that the main thread is read alone.
const child = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    '--instr-atstart=no',
    '--separate-threads=yes',
    '--smc-check=all-non-file',
    `--callgrind-out-file=${join(dir, 'cg.out')}`,
    process.execPath,
    server,
    variant,
  ],
  { env: { ...process.env, BENCH_KEY: key }, stdio: ['ignore', 'pipe', 'ignore'] },
);
const control = (...args) => execFileSync('callgrind_control', [...args, String(child.pid)], { stdio: 'ignore' });
try {
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  const { method, path, body, headers } = REQUESTS[route];
  const url = `http://127.0.0.1:${JSON.parse(line).port}${path}`;
  const load = (amount) =>
    autocannon({ url, method, body, connections: 4, amount, headers: { ...headers, 'x-api-key': key } });
  control('-i', 'on');
  const warm = await load(Number(values.warm));
  if (warm.non2xx > 0) throw new Error(`${variant}: ${warm.non2xx} answers were not 2xx`);
  control('-z');
  const measured = await load(Number(values.requests));
  control('-d');
  if (measured.non2xx > 0) throw new Error(`${variant}: ${measured.non2xx} answers were not 2xx`);
  // The dump's thread 1 is the main thread (JavaScript, the HTTP parser, GC's main-thread share).
  const main = readdirSync(dir).find((f) => f.endsWith('.1-01'));
  const total = Number(readFileSync(join(dir, main), 'utf8').match(/^(?:summary|totals): (\d+)/m)?.[1]);
  const perRequest = Math.round(total / measured.requests.total);
  process.stdout.write(`${JSON.stringify({ variant, route, requests: measured.requests.total, perRequest })}\n`);
} finally {
  child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
