// `npm run build && node bench/cloudflare.mjs`: keygate/cloudflare's D1KeyStore in Miniflare 3
// (workerd's local D1 and KV, in memory). Measures a lookup by digest (findByHash), among --keys keys:
//   1. from Node through Miniflare's bindings (each call a round trip to workerd): through D1 alone,
//      then through the KV cache (every lookup a fresh hit); median, p99, max;
//   2. inside a Worker (the built dist bundled with esbuild): the mean per lookup of --lookups lookups
//      through D1 alone and through KV, timed around the whole loop (workerd's clock moves only on I/O).
// No target: Miniflare runs D1 and KV on this machine, not on Cloudflare's network. Writes
// bench/CLOUDFLARE.md with the host. Not part of `npm test`.
//   node bench/cloudflare.mjs [--keys 1000] [--lookups 5000] [--out bench/CLOUDFLARE.md]
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { KeyManager } from 'keygate';
import { D1KeyStore } from 'keygate/cloudflare';
import { Miniflare } from 'miniflare';

const { values } = parseArgs({
  options: {
    keys: { type: 'string', default: '1000' },
    lookups: { type: 'string', default: '5000' },
    out: { type: 'string' },
  },
});
const KEYS = Number(values.keys);
const LOOKUPS = Number(values.lookups);
const OUT = values.out ?? fileURLToPath(new URL('./CLOUDFLARE.md', import.meta.url));
const require = createRequire(import.meta.url);
const VERSIONS = {
  miniflare: require('miniflare/package.json').version,
  workerd: require('workerd/package.json').version,
};
const log = (line) => process.stderr.write(`[bench:cloudflare] ${line}\n`);

// The Worker of part 2: the built entry points, bundled as a Worker would ship them.
const WORKER = `
import { D1KeyStore } from 'keygate/cloudflare';
export default {
  async fetch(request, env) {
    const { hashes, rounds, cached } = await request.json();
    const store = new D1KeyStore({ db: env.DB, ...(cached && { cache: env.KEYS }) });
    if (cached) for (const hash of hashes) await store.findByHash(hash); // warm KV
    const start = Date.now();
    let found = 0;
    for (let i = 0; i < rounds; i++) if (await store.findByHash(hashes[i % hashes.length])) found++;
    return Response.json({ ms: Date.now() - start, found });
  },
};`;

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const fmt = (ms) => `${ms.toFixed(2)} ms`;

async function timeLookups(store, hashes) {
  const times = [];
  for (let i = 0; i < LOOKUPS; i++) {
    const hash = hashes[i % hashes.length];
    const start = performance.now();
    const record = await store.findByHash(hash);
    times.push(performance.now() - start);
    if (!record) throw new Error('a seeded key was not found');
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), max: times.at(-1) };
}

const bundle = await build({
  stdin: { contents: WORKER, resolveDir: fileURLToPath(new URL('..', import.meta.url)), loader: 'js' },
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  conditions: ['workerd', 'worker', 'browser', 'import'],
  logLevel: 'silent',
});
const mf = new Miniflare({
  modules: true,
  script: bundle.outputFiles[0].text,
  compatibilityDate: '2025-07-01',
  d1Databases: ['DB'],
  kvNamespaces: ['KEYS'],
});
try {
  const db = await mf.getD1Database('DB');
  const kv = await mf.getKVNamespace('KEYS');
  const plain = new D1KeyStore({ db });
  await plain.migrate();
  log(`seeding ${KEYS} keys`);
  const keys = new KeyManager({ store: plain });
  const hashes = [];
  for (let i = 0; i < KEYS; i++) {
    const { key } = await keys.create({ accountId: `acct_${i % 50}`, name: `bench ${i}`, mode: 'live' });
    hashes.push((await plain.findById(key.id)).hash);
  }
  const cached = new D1KeyStore({ db, cache: kv, maxStaleMs: 3_600_000 });
  for (const hash of hashes) await cached.findByHash(hash); // every later lookup is a hit
  log('timing from Node');
  const d1 = await timeLookups(plain, hashes);
  const viaKv = await timeLookups(cached, hashes);
  log('timing inside the Worker');
  const inWorker = async (isCached) => {
    const response = await mf.dispatchFetch('http://bench.test/', {
      method: 'POST',
      body: JSON.stringify({ hashes, rounds: LOOKUPS, cached: isCached }),
    });
    const { ms, found } = await response.json();
    if (found !== LOOKUPS) throw new Error(`the Worker found ${found} of ${LOOKUPS}`);
    return ms / LOOKUPS;
  };
  const workerD1 = await inWorker(false);
  const workerKv = await inWorker(true);

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const md = `# keygate/cloudflare in Miniflare

\`node bench/cloudflare.mjs --keys ${KEYS} --lookups ${LOOKUPS}\` on ${new Date().toISOString().slice(0, 10)}.
Host: ${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()},
Node ${process.version}, Miniflare ${VERSIONS.miniflare}, workerd ${VERSIONS.workerd}. Shared machine: other jobs were running.

A lookup by digest (\`findByHash\`) among ${KEYS} keys, ${LOOKUPS} lookups each. **No target**: Miniflare runs
D1 (SQLite) and KV on this machine, so these figures say what keygate adds, not what Cloudflare's network
costs (a D1 query from a Worker goes to the database's primary location; KV reads are served from the
location's cache when hot).

| path | median | p99 | max |
|---|---|---|---|
| from Node, through D1 (no cache) | ${fmt(d1.p50)} | ${fmt(d1.p99)} | ${fmt(d1.max)} |
| from Node, through the KV cache (a hit) | ${fmt(viaKv.p50)} | ${fmt(viaKv.p99)} | ${fmt(viaKv.max)} |

From Node, every call is also a round trip between Node and the workerd process (Miniflare's binding
proxy), which dominates both rows.

| inside a Worker (mean per lookup, loop timed as a whole) | mean |
|---|---|
| through D1 (no cache) | ${fmt(workerD1)} |
| through the KV cache (a hit) | ${fmt(workerKv)} |

workerd's clock advances only across I/O, so per-lookup percentiles inside the Worker are not
measurable; the mean over the loop is.
`;
  writeFileSync(OUT, md);
  process.stdout.write(md);
} finally {
  await mf.dispose();
}
