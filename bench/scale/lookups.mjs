// Cold lookups (straight to the store, no keygate cache) and the plan PostgreSQL uses for them.
import { SCHEMA } from './load.mjs';

/** Latency percentile in milliseconds of a sorted array of milliseconds. */
export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** `count` lookups of distinct working-set digests, one at a time, each timed. */
export async function coldLookups(store, set, count) {
  const n = Math.min(count, set.hashes.length);
  const step = Math.max(1, Math.floor(set.hashes.length / n));
  for (let i = 0; i < 200; i++) await store.findByHash(set.hashes[(i * 7919) % set.hashes.length]); // connections up
  const times = [];
  let found = 0;
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const record = await store.findByHash(set.hashes[(i * step) % set.hashes.length]);
    times.push(performance.now() - started);
    if (record) found++;
  }
  times.sort((a, b) => a - b);
  return { lookups: n, found, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), maxMs: times.at(-1) };
}

/** EXPLAIN ANALYZE of the store's lookup query for one digest. */
export async function queryPlan({ pool }, set) {
  const { rows } = await pool.query(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT * FROM ${SCHEMA}.keygate_keys WHERE hash = $1`,
    [set.hashes[42]],
  );
  return rows.map((r) => r['QUERY PLAN']);
}
