// Bytes of heap per key cached by CachedKeyStore, whole and by part: `node bench/memory.mjs`
// (writes bench/MEMORY.md and bench/MEMORY.json). Each measurement runs in a fresh process with
// `--expose-gc` and caches --keys keys (default 100,000), then authenticates each once; the figure is
// the median of --runs runs (default 3). Two record shapes (bench/memory/shapes.mjs): KeyManager's
// default record and a realistic one (permissions, an allow list, metadata, a rate limit).
//   --base REF    also measure the sources of git revision REF (e.g. main), for a before/after
//   --quick       1,000 keys, one run: only to keep the benchmark working
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { checkoutSources } from './internal.mjs';

/** The record shapes measured (bench/memory/shapes.mjs). */
export const SHAPES = ['keymanager', 'realistic'];
const CHILD = new URL('./memory/child.mjs', import.meta.url).pathname;
const REPO = new URL('..', import.meta.url).pathname;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function measure(root, shape, keys) {
  const out = execFileSync(process.execPath, ['--expose-gc', CHILD, root, shape, String(keys)], {
    maxBuffer: 1 << 24,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out.toString().trim().split('\n').at(-1));
}

/**
 * Heap bytes per cached key, each measurement in a fresh process: `runs` runs (alternating the trees,
 * so that both see the same machine) of `keys` keys per tree and shape. Returns the result that
 * `renderMemory` writes: `{ at, cpu, cores, keys, runs, measured }`, `measured` keyed by tree and
 * shape with `{ tree, shape, total, runs, parts }` (bytes per key, medians).
 */
export function runMemory({
  keys = 100_000,
  runs = 3,
  trees = { 'this checkout': REPO },
  log = (line) => process.stderr.write(`[memory] ${line}\n`),
} = {}) {
  const samples = {};
  for (let r = 0; r < runs; r++) {
    for (const [tree, root] of Object.entries(trees)) {
      for (const shape of SHAPES) {
        log(`run ${r + 1}/${runs}: ${tree}, ${shape}`);
        const id = `${tree}\u0000${shape}`;
        samples[id] = [...(samples[id] ?? []), measure(root, shape, keys)];
      }
    }
  }
  const measured = Object.fromEntries(
    Object.entries(samples).map(([id, xs]) => {
      const [tree, shape] = id.split('\u0000');
      const parts = Object.fromEntries(Object.keys(xs[0].parts).map((p) => [p, median(xs.map((x) => x.parts[p]))]));
      return [id, { tree, shape, total: median(xs.map((x) => x.total)), runs: xs.map((x) => x.total), parts }];
    }),
  );
  return {
    at: new Date().toISOString().slice(0, 16).replace('T', ' '),
    cpu: os.cpus()[0]?.model ?? 'unknown CPU',
    cores: os.cpus().length,
    keys,
    runs,
    measured,
  };
}

const b = (n) => `${(Math.round(n) || 0).toLocaleString('en-US')} B`;
/** The Markdown report of a `runMemory` result (bench/MEMORY.md). */
export function renderMemory(result) {
  const { keys, runs } = result;
  const lines = [
    '# keygate: memory per cached key',
    '',
    `Written by \`node bench/memory.mjs\` on ${result.at}: ${result.cpu}, ${result.cores} cores; Node ${process.version}. Heap growth (after forced GC) per key, ${keys.toLocaleString('en-US')} keys cached by \`CachedKeyStore\` and authenticated once each, median of ${runs} run(s), each in a fresh process. Records come from a backend-like store (parsed from JSON and frozen, as the Redis and PostgreSQL stores hand them out). Shapes: \`keymanager\` is the record \`KeyManager\` writes with no options (one permission, no allow list, no metadata, no rate limit); \`realistic\` carries two or three permissions, a three-entry allow list shared by its account's keys, metadata and a rate limit (bench/memory/shapes.mjs).`,
    '',
    '| sources | shape | bytes per cached key (median) | runs |',
    '| --- | --- | ---: | ---: |',
    ...Object.values(result.measured).map(
      (m) => `| ${m.tree} | ${m.shape} | ${b(m.total)} | ${m.runs.map((x) => Math.round(x)).join(', ')} |`,
    ),
    '',
    'By part (medians; the first three, each measured on its own, add up to the whole roughly; the reference rows are not part of it):',
    '',
    '| sources | shape | part | bytes per key |',
    '| --- | --- | --- | ---: |',
    ...Object.values(result.measured).flatMap((m) =>
      Object.entries(m.parts).map(([part, bytes]) => `| ${m.tree} | ${m.shape} | ${part} | ${b(bytes)} |`),
    ),
    '',
  ];
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      keys: { type: 'string', default: '100000' },
      runs: { type: 'string', default: '3' },
      base: { type: 'string' },
      quick: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  const trees = { 'this checkout': REPO };
  let checkout;
  if (values.base) {
    checkout = checkoutSources(values.base);
    trees[values.base] = checkout.dir;
  }
  try {
    const result = runMemory({
      keys: values.quick ? 1_000 : Number(values.keys),
      runs: values.quick ? 1 : Number(values.runs),
      trees,
    });
    const md = renderMemory(result);
    const out = values.out ?? (values.quick ? undefined : new URL('./MEMORY.md', import.meta.url).pathname);
    if (out) {
      writeFileSync(out, md);
      writeFileSync(out.replace(/\.md$/, '.json'), `${JSON.stringify(result, null, 2)}\n`);
    }
    console.log(md);
  } finally {
    checkout?.remove();
  }
}
