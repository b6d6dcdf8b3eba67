// `npm run build && node bench/sqlite.mjs`: keygate/sqlite on one file (better-sqlite3). Measures
//   1. a cold lookup (findByHash on the store, no cache) among 100,000 keys: p50, p99, max;
//   2. the revocation delay across processes: from the start of a revoke in this process to the first
//      refusal by a warm CachedKeyStore in another process on the same file (median, max over N).
// Writes bench/SQLITE.md with the host. Not part of `npm test`.
//   node bench/sqlite.mjs [--keys 100000] [--lookups 20000] [--runs 20] [--out bench/SQLITE.md]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { authenticate, CachedKeyStore, KeyManager } from 'keygate';
import { SqliteKeyStore } from 'keygate/sqlite';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    keys: { type: 'string', default: '100000' },
    lookups: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '20' },
    out: { type: 'string' },
    watch: { type: 'boolean', default: false },
  },
});
const now = () => performance.timeOrigin + performance.now();

if (values.watch) {
  // The other process: a warm cache over the same file; prints `ready`, then the time of the first refusal.
  const [path, secret] = positionals;
  const database = new Database(path);
  const store = new SqliteKeyStore({ database });
  const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
  const request = { headers: { 'x-api-key': secret } };
  let ready = false;
  for (;;) {
    const result = await authenticate(request, cached);
    if (result.ok && !ready) {
      ready = true;
      process.stdout.write('ready\n');
    } else if (!result.ok) {
      process.stdout.write(`refused ${now()} ${result.code}\n`);
      break;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  cached.close();
  store.close();
  database.close();
  process.exit(0);
}

const KEYS = Number(values.keys);
const LOOKUPS = Number(values.lookups);
const RUNS = Number(values.runs);
const OUT = values.out ?? new URL('./SQLITE.md', import.meta.url).pathname;
const log = (line) => process.stderr.write(`[bench:sqlite] ${line}\n`);
const folder = mkdtempSync(join(os.tmpdir(), 'keygate-bench-sqlite-'));
const path = join(folder, 'keygate.db');

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (n) => `${n.toFixed(3)} ms`;

try {
  const database = new Database(path);
  const store = new SqliteKeyStore({ database });
  await store.migrate();
  const keys = new KeyManager({ store });

  // 1. 100,000 keys: 1,000 made through the manager, the rest as rows with random digests.
  log(`creating ${KEYS} keys`);
  const real = [];
  for (let i = 0; i < 1_000; i++)
    real.push(await keys.create({ accountId: `acct_${i % 50}`, name: `k${i}`, mode: 'live' }));
  const template = await store.findById(real[0].key.id);
  const insert = database.prepare(
    `INSERT INTO keygate_keys (id, hash, account_id, name, mode, status, permissions, allowed_ips, hint, created_at, updated_at, metadata, version)
     VALUES (?, ?, ?, ?, 'live', 'active', '[]', '[]', ?, ?, ?, '{}', 1)`,
  );
  database.transaction(() => {
    for (let i = real.length; i < KEYS; i++) {
      const hash = crypto.getRandomValues(new Uint8Array(32)).reduce((s, b) => s + b.toString(16).padStart(2, '0'), '');
      insert.run(
        `key_bench_${i}`,
        hash,
        `acct_${i % 5000}`,
        `k${i}`,
        template.hint,
        template.createdAt,
        template.createdAt,
      );
    }
  })();
  const hashes = (await Promise.all(real.map((r) => store.findById(r.key.id)))).map((r) => r.hash);
  log(`${LOOKUPS} cold lookups`);
  for (let i = 0; i < 1_000; i++) await store.findByHash(hashes[i % hashes.length]); // warm the statement
  const lookups = [];
  for (let i = 0; i < LOOKUPS; i++) {
    const hash = hashes[Math.floor(Math.random() * hashes.length)];
    const t0 = performance.now();
    const record = await store.findByHash(hash);
    lookups.push(performance.now() - t0);
    if (!record) throw new Error('a key was not found');
  }
  lookups.sort((a, b) => a - b);

  // 2. The revocation delay across processes.
  log(`${RUNS} revocations across processes`);
  const delays = [];
  for (let run = 0; run < RUNS; run++) {
    const { secret, key } = await keys.create({ accountId: 'acct_revoke', name: `victim ${run}`, mode: 'live' });
    const child = spawn(process.execPath, [new URL(import.meta.url).pathname, '--watch', path, secret], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    if ((await lines.next()).value !== 'ready') throw new Error('the watcher did not start');
    // Past its first poll (which only sets its cursor), at a random point of its poll cycle.
    await new Promise((r) => setTimeout(r, 300 + Math.random() * 250));
    const startedAt = now();
    await keys.revoke(key.id);
    const [, at, code] = String((await lines.next()).value).split(' ');
    if (code !== 'revoked_api_key') throw new Error(`the watcher answered ${code}`);
    delays.push(Number(at) - startedAt);
    await new Promise((r) => child.once('exit', r));
  }
  delays.sort((a, b) => a - b);
  store.close();
  const sqliteVersion = database.prepare('SELECT sqlite_version() AS v').get().v;
  database.close();

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const md = `# keygate/sqlite: cold lookups and revocation across processes

Measured by \`node bench/sqlite.mjs\` (after \`npm run build\`) on ${new Date().toISOString().slice(0, 10)}.

Host: ${cpu}, ${os.cpus().length} cores (shared with other work), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}; Node ${process.version}; better-sqlite3 with SQLite ${sqliteVersion}; the file on the local disk (${os.tmpdir()}), WAL mode.

## Cold lookup: \`findByHash\` on the store, no cache, ${KEYS.toLocaleString('en')} keys

${LOOKUPS.toLocaleString('en')} lookups of random existing keys, one after the other, each a read on the unique index \`keygate_keys_hash\`.

| p50 | p99 | max |
|---|---|---|
| ${ms(quantile(lookups, 0.5))} | ${ms(quantile(lookups, 0.99))} | ${ms(lookups.at(-1))} |

## Revocation delay across processes (pollIntervalMs 250, the default)

From the start of \`revoke\` in this process to the first refusal by a warm \`CachedKeyStore\` (TTL 60 s) in another process on the same file, which authenticates every millisecond; ${RUNS} runs, each revocation at a random point of the watcher's poll cycle.

| median | max | bound stated in the docs |
|---|---|---|
| ${ms(quantile(delays, 0.5))} | ${ms(delays.at(-1))} | pollIntervalMs + one poll (< 1 s with the default) |
`;
  writeFileSync(OUT, md);
  log(`wrote ${OUT}`);
  process.stdout.write(md);
} finally {
  rmSync(folder, { recursive: true, force: true });
}
