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
   export { compileAllowList } from './src/ip/allow-list.ts';
   export { LRUCache } from 'lru-cache';`,
  root,
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
  rows.set(hashes[i], recordJson(shape, i, hashes[i], lib.keyHint(keys[i])));
}
// What a backend returns: a fresh frozen record per lookup, like the Redis and PostgreSQL stores.
const backend = { findByHash: async (hash) => lib.freezeRecord(JSON.parse(rows.get(hash))) };
const options = { permissions: ['email:verify'] };
const request = (i) => ({ headers: { 'x-api-key': keys[i] }, ip: '203.0.113.9' });
// The digest `authenticate` computes: a string of its own, not the one this script keeps.
const digestCopy = (i) => Buffer.from(hashes[i], 'latin1').toString('latin1');

// The cache's own bookkeeping: lru-cache with the same settings, a fresh digest per entry, one shared value.
const lru = grows(() => {
  const cache = new lib.LRUCache({ max: N, ttl: 3_600_000, allowStale: false, updateAgeOnGet: false });
  for (let i = 0; i < N; i++) cache.set(digestCopy(i), rows);
  return cache;
});
lru.kept = null;

const store = new lib.CachedKeyStore(backend, { max: N, ttlMs: 3_600_000 });
// The records the cache keeps (and its bookkeeping), before any request has used them.
const cached = await growsAsync(async () => {
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
// Parts of the compiled form, each built again on its own from the cached records.
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
      'lru-cache entry and the digest it is keyed by': lru.bytes,
      'the cached record': cached - lru.bytes,
      'public view (the `key` of a result)': view,
      'compiled allow list': allowList,
      'the rest of the compiled form (flags, permissions, allow result, memo)': compiled - view - allowList,
    },
  }),
);
