// Micro-benchmarks of the request path (tinybench). Each task runs BATCH calls per sample, so the
// timer's own cost is spread over the batch; figures are per call. The suite runs in several rounds,
// alternating the task order, and reports the median of the rounds' medians with their min-max:
// this machine's speed drifts by tens of percent over seconds, and alternation keeps ratios honest.
import { hash } from 'node:crypto';
import { authenticate, generateKey, isWellFormedKey, MemoryCreditLedger, MemoryRateLimiter } from 'keygate';
import { finishCredits } from 'keygate/adapter-kit';
import { Bench } from 'tinybench';
import { CLIENT_IP, keyStoreWith, manyIpv4, manyIpv6, PERMISSION } from './fixture.mjs';
import { importSource } from './internal.mjs';

const { compileAllowList } = await importSource('src/ip/allow-list.ts');

const BATCH = 1000;
/** The two tasks the credits target compares, round by round (`--only credits` runs just these). */
export const CACHED = 'cached key, 1-entry allow list';
export const CREDITED = 'cached key + MemoryCreditLedger (hold, then settle)';
// Credits the benchmark account starts each round with: more than any round can spend.
const ROUND_CREDITS = 1e15;
let sink = 0;

// Header values from an HTTP parser are flat strings; a key built by concatenation is a rope, which
// V8 reads more slowly. Benchmark what a server actually receives.
const flat = (s) => Buffer.from(s, 'latin1').toString('latin1');

async function repeatAsync(fn) {
  for (let i = 0; i < BATCH; i++) await fn();
}

function repeat(fn) {
  for (let i = 0; i < BATCH; i++) sink ^= fn() ? 1 : 0;
}

async function tasks() {
  const secret = flat(generateKey({ mode: 'live' }));
  const unknown = flat(generateKey({ mode: 'live' }));
  const malformed = flat(`${secret.slice(0, -1)}${secret.at(-1) === 'A' ? 'B' : 'A'}`); // checksum fails
  const small = await keyStoreWith(secret, [CLIENT_IP]);
  const large = await keyStoreWith(secret, manyIpv4(10_000, [CLIENT_IP]));
  const opts = { permissions: [PERMISSION] };
  // The same route with per-key rate limits in this process: the key takes the default, whose limit
  // never runs out during the benchmark, so every call counts one unit and is allowed.
  const limiter = new MemoryRateLimiter();
  const limited = { ...opts, rateLimit: { limiter, default: { limit: 1e15, windowMs: 86_400_000 } } };
  // The same route billing one credit a request, as an adapter does: hold in `authenticate`, settle
  // once the handler has answered (status 200). A fresh ledger each round (outside timing), topped up
  // with more than the round can spend: a MemoryCreditLedger keeps every charge entry.
  const billing = { options: opts };
  const freshLedger = async () => {
    const ledger = new MemoryCreditLedger();
    await ledger.topUp('acct_bench', ROUND_CREDITS);
    billing.options = { ...opts, credits: { ledger } };
    return ledger;
  };
  const req = (key) => ({ headers: { 'x-api-key': key }, ip: CLIENT_IP });
  const [good, bad, stranger] = [req(secret), req(malformed), req(unknown)];
  const short = req(flat(secret.slice(0, -1))); // one character short
  await authenticate(stranger, small, opts); // the unknown digest is now in the negative cache
  const counted = await authenticate(good, small, limited);
  if (!counted.ok || counted.rateLimit?.remaining !== 1e15 - 1)
    throw new Error('bench fixture: the limit was not counted');
  const ledger = await freshLedger();
  const held = await authenticate(good, small, billing.options);
  await finishCredits(held, 200, billing.options);
  if (held.credits?.cost !== 1 || (await ledger.balance('acct_bench')) !== ROUND_CREDITS - 1) {
    throw new Error('bench fixture: the credit was not held and settled');
  }
  for (const [store, r, want] of [
    [small, good, 200],
    [large, good, 200],
    [small, bad, 401],
    [small, short, 401],
    [small, stranger, 401],
  ]) {
    const res = await authenticate(r, store, opts);
    if (res.status !== want) throw new Error(`bench fixture: expected ${want}, got ${res.status} ${res.code ?? ''}`);
  }
  const auth = [
    ['baseline: await an async no-op', () => repeatAsync(async () => undefined)],
    ['baseline: SHA-256 of a key alone (node:crypto hash)', () => repeat(() => hash('sha256', secret, 'hex'))],
    ['baseline: isWellFormedKey alone', () => repeat(() => isWellFormedKey(secret))],
    [CACHED, () => repeatAsync(() => authenticate(good, small, opts))],
    [
      CREDITED,
      () =>
        repeatAsync(async () => {
          const result = await authenticate(good, small, billing.options);
          await finishCredits(result, 200, billing.options);
        }),
    ],
    ['cached key + MemoryRateLimiter', () => repeatAsync(() => authenticate(good, small, limited))],
    ['cached key, 10,000-entry allow list', () => repeatAsync(() => authenticate(good, large, opts))],
    ['malformed key (checksum)', () => repeatAsync(() => authenticate(bad, small, opts))],
    ['malformed key (one character short)', () => repeatAsync(() => authenticate(short, small, opts))],
    ['unknown well-formed key (negative cache)', () => repeatAsync(() => authenticate(stranger, small, opts))],
  ];
  const match = [['baseline: empty loop', () => repeat(() => false)]];
  for (const size of [1, 100, 10_000]) {
    const v4 = compileAllowList(manyIpv4(size, ['203.0.113.7']));
    const v6 = compileAllowList(manyIpv6(size, ['2001:db8:ffff:1::/64']));
    for (const [family, list, hit, miss] of [
      ['IPv4', v4, '203.0.113.7', '198.51.100.1'],
      ['IPv6', v6, '2001:db8:ffff:1::abcd', '2001:db9::1'],
    ]) {
      if (!list.allows(hit) || list.allows(miss)) throw new Error(`bench fixture: ${family} ${size} answers wrongly`);
      const [h, m] = [flat(hit), flat(miss)];
      match.push([`${family}, ${size.toLocaleString('en-US')} entries, hit`, () => repeat(() => list.allows(h))]);
      match.push([`${family}, ${size.toLocaleString('en-US')} entries, miss`, () => repeat(() => list.allows(m))]);
    }
  }
  return { groups: { authenticate: auth, 'allow list': match }, beforeRound: freshLedger };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Runs the micro suite: `rounds` rounds of `time` milliseconds per task. Returns rows
 * `{ group, name, median, min, max, rounds }` in microseconds per call (min and max of the round
 * medians; `rounds` each round's median, so that two tasks can be compared round by round). `only`,
 * when given, names the tasks to run (the others are left out).
 */
export async function runMicro({ time = 1000, rounds = 5, only, log = () => {} } = {}) {
  const all = await tasks();
  const groups = Object.fromEntries(
    Object.entries(all.groups)
      .map(([group, list]) => [group, only ? list.filter(([name]) => only.includes(name)) : list])
      .filter(([, list]) => list.length > 0),
  );
  const perRound = new Map();
  for (let r = 0; r < rounds; r++) {
    await all.beforeRound();
    for (const [group, list] of Object.entries(groups)) {
      const bench = new Bench({ time, warmupTime: Math.min(time, 200) });
      for (const [name, fn] of r % 2 === 0 ? list : [...list].reverse()) bench.add(name, fn);
      await bench.run();
      for (const task of bench.tasks) {
        const res = task.result;
        if (res.state !== 'completed') throw new Error(`bench task "${task.name}" ${res.state}: ${res.error ?? ''}`);
        const key = `${group}\u0000${task.name}`;
        perRound.set(key, [...(perRound.get(key) ?? []), (res.latency.p50 * 1000) / BATCH]);
      }
    }
    log(`micro round ${r + 1}/${rounds} done`);
  }
  if (sink === 0.5) console.log(sink); // keeps the loops' results observable
  return Object.entries(groups).flatMap(([group, list]) =>
    list.map(([name]) => {
      const xs = perRound.get(`${group}\u0000${name}`);
      return { group, name, median: median(xs), min: Math.min(...xs), max: Math.max(...xs), rounds: xs };
    }),
  );
}
