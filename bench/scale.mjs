// A million keys: bulk-loads 1,000,000 keys into PostgreSQL and into Redis, then measures cold lookups,
// a Zipf-distributed working set of 100,000 keys through CachedKeyStore (hit ratio per cache bound),
// process memory per cache bound, cached throughput against the in-memory store, and the plan of the
// lookup query. Writes bench/SCALE.md and bench/SCALE.json. Run: `npm run bench:scale` (minutes).
//
// Flags: --keys N (default 1,000,000), --working-set N (default 100,000), --requests N per bound
// (default 400,000), --render (rewrite SCALE.md from SCALE.json, without measuring). Needs PostgreSQL and Redis at KEYGATE_PG_URL / KEYGATE_REDIS_URL (the test defaults).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadPostgres, loadRedis, openPostgres, openRedis, workingSet } from './scale/load.mjs';
import { coldLookups, queryPlan } from './scale/lookups.mjs';
import { renderScale } from './scale/report.mjs';
import { shareWorkingSet, throughput, zipfRun } from './scale/working-set.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    keys: { type: 'string', default: '1000000' },
    'working-set': { type: 'string', default: '100000' },
    requests: { type: 'string', default: '400000' },
    render: { type: 'boolean', default: false },
  },
});
if (values.render) {
  writeFileSync(join(here, 'SCALE.md'), renderScale(JSON.parse(readFileSync(join(here, 'SCALE.json'), 'utf8'))));
  process.exit(0);
}
const total = Number(values.keys);
const setSize = Number(values['working-set']);
const requests = Number(values.requests);
const BOUNDS = [10_000, 25_000, 50_000, 100_000];

const started = Date.now();
const loadAtStart = os.loadavg()[0];
const results = { startedAt: new Date().toISOString(), node: process.version, total, setSize, requests, stores: {} };
const set = await workingSet(setSize);
const unshare = shareWorkingSet(set);

const pg = await openPostgres();
const redis = await openRedis();
try {
  results.stores.postgres = { load: await loadPostgres(pg, set, total) };
  results.stores.redis = { load: await loadRedis(redis, set, total) };
  for (const [name, store] of [
    ['postgres', pg.store],
    ['redis', redis.store],
  ]) {
    const entry = results.stores[name];
    entry.cold = await coldLookups(store, set, 10_000);
    entry.zipf = [];
    for (const bound of BOUNDS) entry.zipf.push(await zipfRun(name, bound, setSize, requests));
    entry.throughput = await throughput(name, setSize);
  }
  results.stores.postgres.plan = await queryPlan(pg, set);
} finally {
  await pg.close();
  await redis.close();
  unshare();
}
results.seconds = Math.round((Date.now() - started) / 1000);
results.load = [loadAtStart, os.loadavg()[0]];
results.machine = { cpus: execFileSync('nproc').toString().trim() };
writeFileSync(join(here, 'SCALE.json'), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(join(here, 'SCALE.md'), renderScale(results));
console.log(renderScale(results));
