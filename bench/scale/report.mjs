// bench/SCALE.md from the scale run's results, with the scale targets beside the figures.

const f = (x, digits = 2) => (x === null || x === undefined ? 'n/a' : Number(x).toFixed(digits));
const n = (x) => Number(x).toLocaleString('en-US');

/**
 * Least-squares slope of memory growth (MiB) against the cache bound, per 100,000 entries, and the fit's R².
 * `field` is `rssGrowthMiB` (default) or `heapGrowthMiB`.
 */
export function growthPer100k(zipf, field = 'rssGrowthMiB') {
  const xs = zipf.map((z) => z.bound);
  const ys = zipf.map((z) => z[field]);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  const slope = num / den;
  const ssTot = ys.reduce((a, y) => a + (y - my) ** 2, 0);
  const ssRes = ys.reduce((a, y, i) => a + (y - (my + slope * (xs[i] - mx))) ** 2, 0);
  return { perHundredThousandMiB: slope * 100_000, r2: ssTot === 0 ? 1 : 1 - ssRes / ssTot };
}

function storeSection(name, s, target) {
  const g = growthPer100k(s.zipf);
  const heap = growthPer100k(s.zipf, 'heapGrowthMiB');
  const lines = [
    `### ${name}`,
    '',
    `Loaded ${n(s.load.rows)} keys in ${f(s.load.seconds, 1)} s${s.load.tableMiB ? ` (table and indexes ${f(s.load.tableMiB, 0)} MiB)` : ''}${s.load.usedMemoryMiB ? ` (Redis used_memory ${f(s.load.usedMemoryMiB, 0)} MiB)` : ''}.`,
    '',
    `| measure | value | target | verdict |`,
    `|---|---|---|---|`,
    `| cold lookup p50 | ${f(s.cold.p50Ms, 3)} ms | | |`,
    `| cold lookup p99 | ${f(s.cold.p99Ms, 3)} ms | < ${target} ms | ${s.cold.p99Ms < target ? 'met' : 'missed'} |`,
    `| cached authenticate / in-memory store (median of 5 rounds) | ${f(s.throughput.ratio, 3)} (${n(Math.round(s.throughput.cachedPerSecond))} vs ${n(Math.round(s.throughput.memoryPerSecond))} per s) | >= 0.90 | ${s.throughput.ratio >= 0.9 ? 'met' : 'missed'} |`,
    `| RSS growth per 100,000 cached keys | ${f(g.perHundredThousandMiB, 1)} MiB (linear fit R² ${f(g.r2, 3)}) | linear | ${g.r2 >= 0.95 ? 'met' : 'check'} |`,
    `| V8 heap growth per 100,000 cached keys | ${f(heap.perHundredThousandMiB, 1)} MiB (linear fit R² ${f(heap.r2, 3)}) | | |`,
    '',
    '| cache bound | hit ratio (Zipf s=1 over the working set) | cached entries | RSS growth | heap growth |',
    '|---|---|---|---|---|',
    ...s.zipf.map(
      (z) =>
        `| ${n(z.bound)} | ${f(z.hitRatio, 3)} | ${n(z.cached ?? 0)} | ${f(z.rssGrowthMiB, 1)} MiB | ${f(z.heapGrowthMiB, 1)} MiB |`,
    ),
    '',
  ];
  if (s.plan) lines.push('Plan of the lookup query (`EXPLAIN (ANALYZE, BUFFERS)`):', '', '```', ...s.plan, '```', '');
  return lines.join('\n');
}

/** The whole report. */
export function renderScale(r) {
  return [
    '# keygate at a million keys',
    '',
    `Run ${r.startedAt}, Node ${r.node}, ${r.machine?.cpus ?? '?'} CPUs, ${r.seconds ?? '?'} s in all. ` +
      `${n(r.total)} keys per store; a working set of ${n(r.setSize)} of them, requested with a Zipf (s = 1) ` +
      `distribution, ${n(r.requests)} requests per cache bound. Regenerate with \`npm run bench:scale\`.` +
      (r.load ? ` Load average (1 min) ${f(r.load[0], 1)} at the start, ${f(r.load[1], 1)} at the end.` : ''),
    '',
    "Cold lookups go straight to the store (no keygate cache; the database's own caches are warm), one at a " +
      'time. Memory figures are the growth of the process RSS and V8 heap (after forced GC) with the cache ' +
      'filled to its bound, each bound in a fresh process. The heap holds the cached records themselves; RSS ' +
      "adds what the allocator keeps of the client's buffers, which is why its fit is the looser of the two.",
    '',
    storeSection('PostgreSQL', r.stores.postgres, 2),
    storeSection('Redis', r.stores.redis, 1),
  ].join('\n');
}
