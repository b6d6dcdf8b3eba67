// One memory measurement in a process of its own (fresh heap, `--expose-gc`): fills a CachedKeyStore
// with `keys` keys whose records a backend-like store hands out (parsed from JSON and frozen, as the
// Redis and PostgreSQL stores do), authenticates each once, and prints the heap growth per key, whole
// and by part, as one JSON line. Arguments: source root, record shape, number of keys.
import { importSources } from '../internal.mjs';
import { recordJson } from './shapes.mjs';

const [root, shape, count] = process.argv.slice(2);
const N = Number(count);
const lib = await importSources(
  `export { authenticate, CachedKeyStore, generateKey, hashKey, keyHint } from './src/index.ts';
   export { freezeRecord, toPublicKey } from './src/store-kit/index.ts';
   export { compileAllowList } from './src/ip/allow-list.ts';`,
  root,
);
// The cache's own bookkeeping: the bounded map this tree's CachedKeyStore keeps (lru-cache before it had its own).
const bookkeeping = await importSources(`export { ExpiringMap } from './src/store/expiring-map.ts';`, root).then(
  (m) => (max, ttlMs) => new m.ExpiringMap(max, ttlMs),
  async () => {
    const { LRUCache } = await importSources(`export { LRUCache } from 'lru-cache';`, root);
    return (max, ttlMs) => new LRUCache({ max, ttl: ttlMs, allowStale: false, updateAgeOnGet: false });
  },
);

const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
// Bytes per key that `fill` adds to the heap and keeps.
function grows(fill) {
  const before = heap();
  const kept = fill();
  const bytes = (heap() - before) / N;
  return { bytes, kept };
}
async function growsAsync(fill) {
  const before = heap();
  await fill();
  return (heap() - before) / N;
}

const keys = new Array(N);
const hashes = new Array(N);
const rows = new Map();
for (let i = 0; i < N; i++) {
  keys[i] = lib.generateKey({ mode: 'live' });
  hashes[i] = await lib.hashKey(keys[i]);
  // A flat string, as a backend reads one: JSON.stringify may build a rope, which the first parse would
  // flatten in place (about 90 bytes a row), charged to the cache.
  rows.set(hashes[i], Buffer.from(recordJson(shape, i, hashes[i], lib.keyHint(keys[i]))).toString());
}
// What a backend returns: a fresh frozen record per lookup, like the Redis and PostgreSQL stores.
const backend = { findByHash: async (hash) => lib.freezeRecord(JSON.parse(rows.get(hash))) };
const options = { permissions: ['email:verify'] };
const request = (i) => ({ headers: { 'x-api-key': keys[i] }, ip: '203.0.113.9' });
// The digest `authenticate` computes: a string of its own, not the one this script keeps.
const digestCopy = (i) => Buffer.from(hashes[i], 'latin1').toString('latin1');

// The cache's own bookkeeping: its bounded map with the same settings, a fresh digest per entry, one shared value.
const lru = grows(() => {
  const cache = bookkeeping(N, 3_600_000);
  for (let i = 0; i < N; i++) cache.set(digestCopy(i), rows);
  return cache;
});
lru.kept = null;

let store;
// The records the cache keeps (and its bookkeeping, with what it allocates for `max` keys up front),
// before any request has used them.
const cached = await growsAsync(async () => {
  store = new lib.CachedKeyStore(backend, { max: N, ttlMs: 3_600_000 });
  for (let i = 0; i < N; i++) await store.findByHash(digestCopy(i));
});
// What the first request of each key adds: its compiled form and its allow result.
const compiled = await growsAsync(async () => {
  for (let i = 0; i < N; i++) {
    const result = await lib.authenticate(request(i), store, options);
    if (!result.ok) throw new Error(`memory bench: key ${i} was refused (${result.code})`);
  }
});
if (store.size.found !== N) throw new Error(`memory bench: ${store.size.found} keys cached, not ${N}`);
// For reference, parts of the compiled form built again on their own from the cached records: in a
// tree that caches records they are in what the first request adds; in one that caches views, not.
const records = hashes.map((h) => store.peek(h));
const view = grows(() => records.map((r) => lib.toPublicKey(r))).bytes;
// Counted once per distinct list object: a cache shares equal lists (and their compiled form) among keys.
const lists = [...new Set(records.map((r) => r.allowedIps))];
const allowList = grows(() => lists.map((l) => lib.compileAllowList(l))).bytes;
const total = cached + compiled;
console.log(
  JSON.stringify({
    total,
    parts: {
      'map entry (slot, deadline) and the digest it is keyed by': lru.bytes,
      'the cached record (this tree: its public view, the one object per key)': cached - lru.bytes,
      'what the first request adds (compiled form, public view, allow result)': compiled,
      'for reference, not in the total: a public view built alone': view,
      'for reference, not in the total: compiled allow lists (shared by their keys)': allowList,
    },
  }),
);
