// keygate/mysql on the MariaDB (or MySQL) at BENCH_MYSQL_URL: the cold lookup (a key's first
// `findByHash`, no keygate cache in front) at 100,000 keys, and the revocation delay across instances
// (revoked through one MysqlKeyStore, measured until a warm CachedKeyStore over another, on its own pool,
// refuses the key). Writes bench/MYSQL.md. Run with `npm run build && node bench/mysql.mjs`; it creates
// a database of its own and drops it at the end.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { authenticate, CachedKeyStore, KeyManager } from 'keygate';
import { MysqlKeyStore } from 'keygate/mysql';
import mysql from 'mysql2/promise';

const URL_ = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const KEYS = 100_000;
const LOOKUPS = 5_000;
const REVOCATIONS = 30;
const POLL_MS = 500;

const database = `keygate_bench_${process.pid}`;
const admin = await mysql.createConnection({ uri: URL_ });
await admin.query(`CREATE DATABASE \`${database}\``);
const url = new URL(URL_);
url.pathname = `/${database}`;
const pools = [
  mysql.createPool({ uri: url.toString(), connectionLimit: 4 }),
  mysql.createPool({ uri: url.toString(), connectionLimit: 4 }),
];
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (n) => `${n.toFixed(3)} ms`;

try {
  const [{ version }] = (await admin.query('SELECT VERSION() AS version'))[0];
  const store = new MysqlKeyStore({ client: pools[0] });
  await store.migrate();

  // Seed in bulk: multi-row INSERTs of 1,000 records (digests are random: lookups only need them to be unique).
  const seedStart = performance.now();
  const hashes = [];
  const now = new Date().toISOString().slice(0, 23).replace('T', ' ');
  for (let batch = 0; batch < KEYS / 1000; batch++) {
    const rows = [];
    for (let i = 0; i < 1000; i++) {
      const n = batch * 1000 + i;
      const hash = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
      hashes.push(hash);
      rows.push([
        `key_seed_${n}`,
        hash,
        `acct_${n % 1000}`,
        `seed ${n}`,
        'live',
        'active',
        '[]',
        '[]',
        'mk_live_…seed',
        now,
        now,
        '{}',
        1,
      ]);
    }
    await pools[0].query(
      'INSERT INTO keygate_keys (id, hash, account_id, name, mode, status, permissions, allowed_ips, hint, created_at, updated_at, metadata, version) VALUES ?',
      [rows],
    );
  }
  const seedMs = performance.now() - seedStart;

  // Cold lookups: each key looked up once, in random order, one at a time.
  const picks = [];
  for (let i = 0; i < LOOKUPS; i++) picks.push(hashes[Math.floor(Math.random() * hashes.length)]);
  for (let i = 0; i < 200; i++) await store.findByHash(picks[i]); // warm-up: connections, statement cache
  const lookups = [];
  for (const hash of picks.slice(200)) {
    const start = performance.now();
    const record = await store.findByHash(hash);
    lookups.push(performance.now() - start);
    if (!record) throw new Error('bench: a seeded key was not found');
  }
  lookups.sort((a, b) => a - b);

  // Revocation across instances: written through `writer`, refused by a warm cache over `reader`.
  const writer = new KeyManager({ store: new MysqlKeyStore({ client: pools[0] }) });
  const reader = new MysqlKeyStore({ client: pools[1], pollIntervalMs: POLL_MS });
  const cached = new CachedKeyStore(reader, { ttlMs: 600_000 });
  const delays = [];
  for (let i = 0; i < REVOCATIONS; i++) {
    const { secret, key } = await writer.create({ accountId: 'acct_bench', name: `victim ${i}`, mode: 'live' });
    const auth = () => authenticate({ headers: { 'x-api-key': secret } }, cached);
    if (!(await auth()).ok) throw new Error('bench: the key should authenticate');
    // A random phase against the poller, as a real revocation has.
    await new Promise((r) => setTimeout(r, Math.random() * POLL_MS));
    const start = performance.now();
    await writer.revoke(key.id);
    while ((await auth()).ok) await new Promise((r) => setTimeout(r, 1));
    delays.push(performance.now() - start);
  }
  cached.close();
  reader.close();
  delays.sort((a, b) => a - b);

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# keygate/mysql',
    '',
    `Run ${new Date().toISOString()} on ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${version} on the same host (127.0.0.1), load average (1 min) ${os.loadavg()[0].toFixed(1)} at the end. Regenerate with \`npm run build && node bench/mysql.mjs\`.`,
    '',
    '## Cold lookup',
    '',
    `${KEYS.toLocaleString('en')} keys seeded with multi-row INSERTs in ${(seedMs / 1000).toFixed(1)} s. ${lookups.length.toLocaleString('en')} lookups of random keys through \`MysqlKeyStore.findByHash\` (no keygate cache; the server's buffer pool warm), one at a time.`,
    '',
    '| measure | value |',
    '|---|---|',
    `| cold lookup p50 | ${ms(quantile(lookups, 0.5))} |`,
    `| cold lookup p99 | ${ms(quantile(lookups, 0.99))} |`,
    `| cold lookup max | ${ms(lookups.at(-1))} |`,
    '',
    '## Revocation delay across instances',
    '',
    `${REVOCATIONS} keys, each revoked through one \`MysqlKeyStore\` (its own pool) at a random moment, and timed from the start of the revoke call until a warm \`CachedKeyStore\` (TTL 10 min) over another \`MysqlKeyStore\` (another pool, \`pollIntervalMs\` ${POLL_MS}) refuses it. The bound is \`pollIntervalMs\` + one poll query + the write itself.`,
    '',
    '| measure | value |',
    '|---|---|',
    `| median | ${ms(quantile(delays, 0.5))} |`,
    `| max | ${ms(delays.at(-1))} |`,
    `| bound (pollIntervalMs) | ${POLL_MS} ms + one query |`,
    '',
  ];
  writeFileSync(join(import.meta.dirname, 'MYSQL.md'), lines.join('\n'));
  console.log(lines.join('\n'));
} finally {
  await Promise.all(pools.map((p) => p.end().catch(() => {})));
  await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.end();
}
