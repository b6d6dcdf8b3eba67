// The cached `authenticate` path of this checkout against the sources of a git revision, in one
// process, round by round (task order reversed every other round):
//   node bench/micro-ab.mjs [REF] [ROUNDS]     (REF defaults to HEAD)
// Both sides are bundled from the sources with the same settings, so the comparison is of the code
// alone. Prints each side's median µs per call and the median of the per-round ratios.
import { Bench } from 'tinybench';
import { CLIENT_IP, PERMISSION } from './fixture.mjs';
import { checkoutSources, importSources } from './internal.mjs';

const ref = process.argv[2] ?? 'HEAD';
const rounds = Number(process.argv[3] ?? 7);
const BATCH = 1000;
const ENTRY = `export { authenticate, CachedKeyStore, generateKey, hashKey, keyHint, MemoryKeyStore } from './src/index.ts';`;
const flat = (s) => Buffer.from(s, 'latin1').toString('latin1');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// The micro suite's CACHED case (one-entry allow list), and a key with a few permissions and entries.
async function task(lib, secret, allowedIps, permissions) {
  const memory = new lib.MemoryKeyStore();
  const now = new Date().toISOString();
  await memory.insert({
    ...{ id: 'key_bench', hash: await lib.hashKey(secret), accountId: 'acct_bench', name: 'bench', mode: 'live' },
    ...{ status: 'active', permissions, allowedIps, hint: lib.keyHint(secret), createdAt: now, updatedAt: now },
    ...{ expiresAt: null, revokedAt: null, rotatedFrom: null, rotatedTo: null, metadata: {}, version: 1 },
  });
  const store = new lib.CachedKeyStore(memory, { ttlMs: 3_600_000 });
  const request = { headers: { 'x-api-key': secret }, ip: CLIENT_IP };
  const options = { permissions: [PERMISSION] };
  if (!(await lib.authenticate(request, store, options)).ok) throw new Error('micro-ab: the key was refused');
  return async () => {
    for (let i = 0; i < BATCH; i++) await lib.authenticate(request, store, options);
  };
}

const checkout = checkoutSources(ref);
try {
  const sides = { [ref]: await importSources(ENTRY, checkout.dir), 'this checkout': await importSources(ENTRY) };
  const secret = flat(sides[ref].generateKey({ mode: 'live' }));
  const cases = {
    'cached key, 1-entry allow list': [[CLIENT_IP], [PERMISSION]],
    'cached key, 3 entries, 3 permissions': [
      ['203.0.113.0/24', '2001:db8::/32', CLIENT_IP],
      ['lists:read', 'email:send', PERMISSION],
    ],
  };
  const samples = {};
  const tasks = [];
  for (const [name, [ips, perms]] of Object.entries(cases)) {
    for (const [side, lib] of Object.entries(sides))
      tasks.push([`${name} | ${side}`, await task(lib, secret, ips, perms)]);
  }
  for (let r = 0; r < rounds; r++) {
    const bench = new Bench({ time: 400, warmupTime: 100 });
    for (const [name, fn] of r % 2 === 0 ? tasks : [...tasks].reverse()) bench.add(name, fn);
    await bench.run();
    for (const t of bench.tasks) samples[t.name] = [...(samples[t.name] ?? []), (t.result.latency.p50 * 1000) / BATCH];
    process.stderr.write(`[micro-ab] round ${r + 1}/${rounds}\n`);
  }
  for (const name of Object.keys(cases)) {
    const before = samples[`${name} | ${ref}`];
    const after = samples[`${name} | this checkout`];
    const ratios = after.map((a, i) => a / before[i]);
    console.log(
      `${name}: ${ref} ${median(before).toFixed(3)} µs, this checkout ${median(after).toFixed(3)} µs; ` +
        `after/before per round median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`,
    );
  }
} finally {
  checkout.remove();
}
