// One working-set measurement (see working-set.mjs); prints one JSON line.
import { readFileSync } from 'node:fs';
import { authenticate, CachedKeyStore, MemoryKeyStore } from 'keygate';
import { openPostgres, openRedis, recordOf } from './load.mjs';
import { zipf } from './zipf.mjs';

const [setFile, mode, storeName, ...rest] = process.argv.slice(2);
const set = JSON.parse(readFileSync(setFile, 'utf8'));
const opened = storeName === 'postgres' ? await openPostgres({ max: 16 }) : await openRedis();
const mib = (bytes) => bytes / 2 ** 20;

function settle() {
  for (let i = 0; i < 3; i++) globalThis.gc();
  return process.memoryUsage();
}

async function drive(store, sequence, concurrency) {
  let next = 0;
  async function worker() {
    while (next < sequence.length) await store.findByHash(set.hashes[sequence[next++]]);
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function zipfMode(bound, setSize, requests) {
  const sample = zipf(setSize, 1, 7);
  const sequence = Array.from({ length: requests }, sample);
  const before = settle();
  const cached = new CachedKeyStore(opened.store, { max: bound, ttlMs: 3_600_000 });
  let hits = 0;
  for (const rank of sequence.slice(0, 50_000)) await cached.findByHash(set.hashes[rank]); // warm-up
  for (const rank of sequence) {
    const hash = set.hashes[rank];
    if (cached.peek(hash) !== undefined) hits++;
    await cached.findByHash(hash);
  }
  // Fill to the bound, then weigh the process.
  await drive(
    cached,
    Array.from({ length: Math.min(bound, setSize) }, (_, i) => i),
    32,
  );
  const after = settle();
  return {
    bound,
    requests,
    hitRatio: hits / requests,
    cached: cached.size?.found ?? null,
    rssGrowthMiB: mib(after.rss - before.rss),
    heapGrowthMiB: mib(after.heapUsed - before.heapUsed),
    rssMiB: mib(after.rss),
  };
}

async function rate(store, sequence, rounds = 5) {
  const rates = [];
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    for (const rank of sequence)
      await authenticate({ headers: { 'x-api-key': set.keys[rank] }, ip: '127.0.0.1' }, store);
    rates.push(sequence.length / ((performance.now() - started) / 1000));
  }
  return rates;
}

async function throughputMode(setSize) {
  const memory = new MemoryKeyStore();
  for (let i = 0; i < setSize; i++) await memory.insert(recordOf(set, i));
  const cached = new CachedKeyStore(opened.store, { max: setSize, ttlMs: 3_600_000 });
  for (let i = 0; i < setSize; i++) await cached.findByHash(set.hashes[i]);
  const sample = zipf(setSize, 1, 11);
  const sequence = Array.from({ length: 200_000 }, sample);
  const memoryRates = [];
  const cachedRates = [];
  for (let round = 0; round < 5; round++) {
    // Alternate which goes first, so that neither always runs on a warmer process.
    const order = round % 2 ? [memoryRates, cachedRates] : [cachedRates, memoryRates];
    for (const into of order) into.push(...(await rate(into === memoryRates ? memory : cached, sequence, 1)));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return {
    requestsPerRound: sequence.length,
    memoryPerSecond: median(memoryRates),
    cachedPerSecond: median(cachedRates),
    ratio: median(cachedRates) / median(memoryRates),
    rounds: { memory: memoryRates, cached: cachedRates },
  };
}

try {
  const result = mode === 'zipf' ? await zipfMode(...rest.map(Number)) : await throughputMode(Number(rest[0]));
  console.log(JSON.stringify(result));
} finally {
  await opened.close();
}
