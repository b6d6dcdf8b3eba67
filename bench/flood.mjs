// Floods, run in a child process of their own so that its RSS is theirs:
//   node --expose-gc bench/flood.mjs <malformed count> <unknown count>
// 1. `malformed` malformed keys against a store that counts every lookup (peek and findByHash).
// 2. `unknown` distinct well-formed unknown keys through a CachedKeyStore, sampling RSS as they go.
// Prints one JSON line.
import { authenticate, CachedKeyStore, generateKey, MemoryKeyStore } from 'keygate';

const [malformedCount, unknownCount] = process.argv.slice(2).map(Number);
const NEGATIVE_MAX = 10_000;
const mb = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10;
const rss = () => {
  globalThis.gc?.();
  return mb(process.memoryUsage().rss);
};

// Keys that fail the format in every way a client gets it wrong: a changed character (checksum),
// the wrong prefix or mode, the wrong length, characters outside base62.
function malformed(i, valid) {
  const at = 8 + (i % 38);
  const swapped = valid[at] === 'a' ? 'b' : 'a';
  switch (i % 5) {
    case 0:
      return valid.slice(0, at) + swapped + valid.slice(at + 1);
    case 1:
      return `xx${valid.slice(2)}`;
    case 2:
      return valid.replace('_live_', '_prod_');
    case 3:
      return valid.slice(0, 20 + (i % 20));
    default:
      return `${valid.slice(0, at)}-${valid.slice(at + 1)}`;
  }
}

let lookups = 0;
const counting = {
  peek() {
    lookups++;
    return undefined;
  },
  findByHash() {
    lookups++;
    return Promise.resolve(null);
  },
};
const valid = generateKey({ mode: 'live' });
const statuses = {};
for (let i = 0; i < malformedCount; i++) {
  const r = await authenticate({ headers: { 'x-api-key': malformed(i, valid) }, ip: '127.0.0.1' }, counting);
  statuses[r.code] = (statuses[r.code] ?? 0) + 1;
}

const store = new CachedKeyStore(new MemoryKeyStore(), { negativeMax: NEGATIVE_MAX, negativeTtlMs: 3_600_000 });
const samples = [{ sent: 0, rssMb: rss(), negativeEntries: 0 }];
const every = Math.max(1, Math.floor(unknownCount / 10));
let denied = 0;
for (let i = 1; i <= unknownCount; i++) {
  const r = await authenticate({ headers: { 'x-api-key': generateKey({ mode: 'live' }) }, ip: '127.0.0.1' }, store);
  if (r.code === 'invalid_api_key') denied++;
  if (i % every === 0) samples.push({ sent: i, rssMb: rss(), negativeEntries: store.size.missing });
}
process.stdout.write(
  `${JSON.stringify({ malformed: { sent: malformedCount, lookups, statuses }, unknown: { sent: unknownCount, denied, negativeMax: NEGATIVE_MAX, samples } })}\n`,
);
