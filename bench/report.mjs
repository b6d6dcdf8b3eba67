// Turns the benchmark's measurements into bench/RESULTS.md: tables first, then each target with its
// verdict, computed from the same run.
import { COMPARISONS } from './http.mjs';
import { frameworkLines, frameworkMethod, frameworkTargets } from './http-report.mjs';
import { CACHED, CREDITED } from './micro.mjs';
import { SHA256_OWNER } from './profile.mjs';
import { budgetSections, budgetTargets, LEASED_HTTP } from './report-budgets.mjs';
import { growthPer100k } from './scale/report.mjs';

// The scale run's stores: name, key in SCALE.json, cold-lookup p99 target in ms.
const SCALE_STORES = [
  ['PostgreSQL', 'postgres', 2],
  ['Redis', 'redis', 1],
];

// Ratios shown for reference, without a target.
const REFERENCES = [
  ['express-noop', 'express-bare'],
  ['express-keygate', 'express-noop'],
  ['fastify-noop', 'fastify-bare'],
  ['fastify-keygate', 'fastify-noop'],
  ['fastify-keygate-limits', 'fastify-keygate'],
  ['fastify-keygate-limits-notimeout', 'fastify-keygate'],
  ...LEASED_HTTP.map(([v]) => [v, 'fastify-keygate']),
  ['hono-noop', 'hono-bare'],
  ['hono-keygate', 'hono-noop'],
];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const us = (x) => x.toFixed(3);
const fixed = (x, d = 2) => x.toFixed(d);
const int = (x) => Math.round(x).toLocaleString('en-US');
const verdict = (ok, miss) => (ok ? 'met' : `missed (${miss})`);

function table(head, rows) {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** Median of the per-round ratios a/b: each round measures a and b back to back, so drift cancels. */

// How each measured window began: on a quiet machine (the stores done with what the previous variant
// left them), after a short unmeasured load of the same request. Older results carry neither.
function quietNote(http, options) {
  const waits = Object.values(http).flatMap((r) => r.quietMs ?? []);
  if (waits.length === 0) return '';
  return `Each measured window waited for the machine to go quiet (under 10% of its CPU busy over a quarter second: PostgreSQL and Redis go on working for seconds after a plain ledger's load; median wait ${int(median(waits))} ms, longest ${int(Math.max(...waits))} ms) and followed ${options.rewarm} s of unmeasured load of the same request, so no variant pays for what the one before it left running, nor for its own first second of new connections after sitting idle through the others' windows. `;
}

export function roundRatio(http, a, b) {
  return median(http[a].rps.map((x, i) => x / http[b].rps[i]));
}

// The shared ledgers whose round trips per billed request are stated: name, key in `credits`, what is counted.
const CREDIT_STORES = [
  ['PostgreSQL', 'postgres', 'statements, BEGIN and COMMIT included'],
  ['Redis', 'redis', 'commands (one EVALSHA each)'],
];

/**
 * Check row 10's rows (credits): what holding and settling a credit adds to a cached `authenticate`
 * on a `MemoryCreditLedger` (target ≤ 0.3 µs, the median of the per-round differences), and the round
 * trips a billed request sends to PostgreSQL and Redis (stated). Rows only for what was measured.
 */
export function creditTargets({ micro, credits }) {
  const out = [];
  const plain = micro?.find((r) => r.name === CACHED);
  const billed = micro?.find((r) => r.name === CREDITED);
  if (plain && billed) {
    // Round by round: both ran in the same round, so the machine's drift cancels.
    const added = median(billed.rounds?.map((x, i) => x - plain.rounds[i]) ?? [billed.median - plain.median]);
    out.push({
      target: 'row 10 (credits) adds to a cached `authenticate` on memory ≤ 0.3 µs',
      measured: `${added.toFixed(3)} µs`,
      ok: added <= 0.3,
      verdict: verdict(added <= 0.3, `${fixed(((added - 0.3) / 0.3) * 100, 0)}% over`),
      why: `median of the per-round differences: cached key ${us(plain.median)} µs, with one credit held on a \`MemoryCreditLedger\` and settled (\`finishCredits\`, as the adapters do) ${us(billed.median)} µs`,
    });
  }
  for (const [name, store, counted] of CREDIT_STORES) {
    const t = credits?.[store];
    if (!t) continue;
    out.push({
      target: `${name}: round trips per billed request, hold + settle (stated, no target)`,
      measured: t.skipped ? 'not measured' : `${fixed(t.perRequest, 1)}`,
      ok: true,
      verdict: 'stated',
      why: t.skipped
        ? `${name} did not answer: ${t.skipped}`
        : `hold ${fixed(t.perHold, 1)}, settle ${fixed(t.perSettle, 1)}: ${counted}, counted at the client`,
    });
  }
  return out;
}

/** Target checks from the measurements: `{ target, measured, verdict, ok }` rows. */
export function targets({ micro, http, flood, scale, credits, leases, memory, httpProfiles }) {
  const m = (name) => micro.find((r) => r.name === name)?.median ?? Number.NaN;
  const out = [];
  const atMost = (target, value, limit, unit, digits, why = '') => {
    const ok = value <= limit;
    out.push({
      target,
      measured: `${value.toFixed(digits)} ${unit}`,
      ok,
      verdict: verdict(ok, `${fixed(((value - limit) / limit) * 100, 0)}% over`),
      why,
    });
  };
  const sha = m('baseline: SHA-256 of a key alone (node:crypto hash)');
  const format = m('baseline: isWellFormedKey alone');
  const tick = m('baseline: await an async no-op');
  const cached = m('cached key, 1-entry allow list');
  atMost(
    '`authenticate`, cached key, 1-entry allow list ≤ 1.5 µs',
    cached,
    1.5,
    'µs',
    3,
    `of which SHA-256 of the key alone ${us(sha)} µs (${fixed((100 * sha) / cached, 0)}%), the format check alone ${us(format)} µs, one await ${us(tick)} µs`,
  );
  atMost(
    '`authenticate`, malformed key ≤ 0.3 µs',
    m('malformed key (checksum)'),
    0.3,
    'µs',
    3,
    `the worst case, a checksum that fails after a full pass: of which the format check alone ${us(format)} µs and one await ${us(tick)} µs; a key of the wrong length ${us(m('malformed key (one character short)'))} µs`,
  );
  for (const family of ['IPv4', 'IPv6']) {
    for (const kind of ['hit', 'miss']) {
      const ratio = m(`${family}, 10,000 entries, ${kind}`) / m(`${family}, 1 entries, ${kind}`);
      const extra = m(`${family}, 10,000 entries, ${kind}`) - m(`${family}, 1 entries, ${kind}`);
      atMost(
        `allow list ${family} ${kind}: 10,000 entries / 1 entry ≤ 1.3`,
        ratio,
        1.3,
        '×',
        2,
        `1 entry ${us(m(`${family}, 1 entries, ${kind}`))} µs (mostly parsing the address); 10,000 add ${us(extra)} µs of binary search`,
      );
    }
  }
  const plain = micro.find((r) => r.name === 'cached key, 1-entry allow list');
  const limited = micro.find((r) => r.name === 'cached key + MemoryRateLimiter');
  if (plain && limited) {
    // Round by round: both ran in the same round, so the machine's drift cancels.
    const added = median(limited.rounds?.map((x, i) => x - plain.rounds[i]) ?? [limited.median - plain.median]);
    atMost(
      '`MemoryRateLimiter` adds to a cached `authenticate` ≤ 0.3 µs',
      added,
      0.3,
      'µs',
      3,
      `median of the per-round differences: cached key ${us(plain.median)} µs, with per-key limits counted in memory ${us(limited.median)} µs`,
    );
  }
  out.push(...creditTargets({ micro, credits }));
  const authRatio = m('cached key, 10,000-entry allow list') / m('cached key, 1-entry allow list');
  atMost('`authenticate` with 10,000 entries / with 1 entry ≤ 1.3', authRatio, 1.3, '×', 2, 'IPv4 client');
  if (http) {
    for (const [a, b, limit] of COMPARISONS) {
      const ratio = roundRatio(http, a, b);
      const ok = ratio >= limit;
      out.push({
        target: `HTTP ${a} / ${b} ≥ ${limit}`,
        measured: `${fixed(ratio)} ×`,
        ok,
        verdict: verdict(ok, `${fixed(((limit - ratio) / limit) * 100, 0)}% under`),
        why:
          http[a].cpu.length && http[b].cpu.length
            ? `server CPU per request: ${b} ${fixed(median(http[b].cpu), 1)} µs, ${a} ${fixed(median(http[a].cpu), 1)} µs (ratio ${fixed(median(http[b].cpu) / median(http[a].cpu))})`
            : '',
      });
    }
  }
  const cpu = (v) => (http?.[v]?.cpu.length ? `${fixed(median(http[v].cpu), 1)} µs` : 'n/a');
  for (const [variant, client] of [
    ['fastify-keygate-limits', "node-redis's defaults"],
    ['fastify-keygate-limits-notimeout', 'node-redis `commandOptions: { timeout: 0 }`'],
  ]) {
    const r = http?.[variant];
    if (!r?.rps.length) continue;
    out.push({
      target: `HTTP ${variant} / fastify-keygate (limits on Redis, ${client}; stated, no target)`,
      measured: `${fixed(roundRatio(http, variant, 'fastify-keygate'))} ×`,
      ok: true,
      verdict: 'stated',
      why: `${r.redis.length ? fixed(median(r.redis), 2) : 'n/a'} Redis commands per request (one EVALSHA: one round trip); server CPU per request: fastify-keygate ${cpu('fastify-keygate')}, with limits ${cpu(variant)}`,
    });
  }
  // The framework path (GET and POST) where the run measured POST too; leased budgets and memory.
  if (http && Object.values(http).some((r) => r.post)) out.push(...frameworkTargets(http, httpProfiles));
  out.push(...budgetTargets({ http, leases, memory }));
  for (const [name, store, limit] of scale ? SCALE_STORES : []) {
    const s = scale.stores[store];
    atMost(
      `${name}: cold lookup p99 at 1,000,000 keys < ${limit} ms`,
      s.cold.p99Ms,
      limit,
      'ms',
      3,
      `p50 ${fixed(s.cold.p50Ms, 3)} ms; \`npm run bench:scale\``,
    );
    const ratio = s.throughput.ratio;
    out.push({
      target: `${name}: cached \`authenticate\` / in-memory store ≥ 0.90`,
      measured: `${fixed(ratio)} ×`,
      ok: ratio >= 0.9,
      verdict: verdict(ratio >= 0.9, `${fixed(((0.9 - ratio) / 0.9) * 100, 0)}% under`),
      why: `${int(s.throughput.cachedPerSecond)} vs ${int(s.throughput.memoryPerSecond)} per s, Zipf over 100,000 keys`,
    });
  }
  out.push({
    target: `${int(flood.malformed.sent)} malformed keys cause 0 store lookups`,
    measured: `${flood.malformed.lookups} lookups`,
    ok: flood.malformed.lookups === 0,
    verdict: verdict(flood.malformed.lookups === 0, 'lookups made'),
  });
  const peak = Math.max(...flood.unknown.samples.map((s) => s.negativeEntries));
  out.push({
    target: `negative cache stays within its bound under ${int(flood.unknown.sent)} distinct unknown keys`,
    measured: `${int(peak)} of ${int(flood.unknown.negativeMax)} entries`,
    ok: peak <= flood.unknown.negativeMax,
    verdict: verdict(peak <= flood.unknown.negativeMax, 'bound exceeded'),
  });
  return out;
}

/** The Markdown report. */
export function render(results, scale) {
  const { machine, options, micro, http, flood, profiles, seconds } = results;
  const checks = targets({ ...results, scale });
  const sections = [
    '# keygate benchmark results',
    `Written by \`npm run bench\` (\`node bench/run.mjs${options.quick ? ' --quick' : ''}\`) on ${machine.date}, in ${fixed(seconds, 0)} s. ${machine.cpu}, ${machine.cores} cores, ${machine.memory} GiB; Node ${machine.node} (${machine.platform}). Load generator and servers share the machine: each server runs in a process of its own${machine.pinned ? ' pinned to CPU 0, autocannon in the orchestrating process pinned to CPU 1' : ', autocannon in the orchestrating process'}. The hypervisor took back (steal time) ${fixed(machine.steal.micro, 1)}% of CPU time during the micro-benchmarks and ${fixed(machine.steal.http, 1)}% during the HTTP runs: figures from this machine drift by tens of percent from one minute to the next, which is why every comparison below is made within one run, alternating.`,
    '## Targets',
    table(
      ['target', 'measured (median)', 'verdict', 'where the time goes (same run)'],
      checks.map((c) => [c.target, c.measured, c.verdict, c.why ?? '']),
    ),
    '## Micro-benchmarks',
    `tinybench, ${options.microRounds} rounds of ${options.microTime} ms per task, task order reversed every other round; each sample is a batch of 1,000 calls. Median of the round medians, and the lowest and highest round median, in µs per call. Keys and addresses are flat strings, as an HTTP parser hands them over.`,
    table(
      ['group', 'case', 'median µs', 'min-max µs'],
      micro.map((r) => [r.group, r.name, us(r.median), `${us(r.min)}-${us(r.max)}`]),
    ),
  ];
  if (http) {
    sections.push(
      '## HTTP throughput',
      `autocannon, ${options.connections} connections, GET ${'`/v1/ping`'} with the same valid \`mk_live_\` key on every variant (1-entry allow list \`127.0.0.1\`, permission \`email:verify\`), same JSON body. ${options.httpRounds} rounds of ${options.httpSeconds} s per variant after a ${options.warmup} s warm-up each; rounds alternate the variants (every other round in reverse). ${quietNote(http, options)}Every request of every run was answered 2xx.`,
      table(
        ['variant', 'median req/s', 'min-max req/s', 'median p50 latency ms', 'server CPU µs per request'],
        Object.entries(http).map(([v, r]) => [
          v,
          int(median(r.rps)),
          `${int(Math.min(...r.rps))}-${int(Math.max(...r.rps))}`,
          fixed(median(r.p50), 1),
          r.cpu.length ? fixed(median(r.cpu), 1) : 'n/a',
        ]),
      ),
      table(
        ['ratio', 'median of per-round ratios', 'ratio of medians', 'per-round min-max', 'target'],
        [...COMPARISONS, ...REFERENCES].map(([a, b, limit]) => {
          const rounds = http[a].rps.map((x, i) => x / http[b].rps[i]);
          return [
            `${a} / ${b}`,
            fixed(roundRatio(http, a, b)),
            fixed(median(http[a].rps) / median(http[b].rps)),
            `${fixed(Math.min(...rounds))}-${fixed(Math.max(...rounds))}`,
            limit ? `≥ ${limit}` : 'reference',
          ];
        }),
      ),
      ...(Object.values(http).every((r) => r.cpu.length > 0)
        ? [
            "Throughput on a shared 2-core machine also measures the load generator and the hypervisor. The server's own CPU time per request (user + system, from `/proc`, over the same runs; median of the rounds) isolates what each variant costs the server:",
            table(
              ['framework', 'bare µs', 'noop µs', 'keygate µs', 'keygate − bare µs', 'bare / keygate'],
              ['express', 'fastify', 'hono'].map((f) => {
                const cpu = (v) => median(http[`${f}-${v}`].cpu);
                return [
                  f,
                  fixed(cpu('bare'), 1),
                  fixed(cpu('noop'), 1),
                  fixed(cpu('keygate'), 1),
                  fixed(cpu('keygate') - cpu('bare'), 1),
                  fixed(cpu('bare') / cpu('keygate')),
                ];
              }),
            ),
          ]
        : []),
      "A `-noop` variant is the bare server plus one asynchronous middleware that does nothing: what the framework itself charges for any middleware of that kind, keygate or not. The targets are judged on the median of per-round ratios (the two variants of a ratio run back to back in every round, so the machine's drift cancels).",
      "`fastify-keygate-limits` is `fastify-keygate` with per-key rate limits shared through Redis (`RedisRateLimiter` on the local server, the key under a default limit that never runs out): each request runs one Lua script (EVALSHA), one round trip; the Redis commands it sent are counted per round. Its client is node-redis with its defaults, which since version 6 give every command a 5 s timeout armed with `AbortSignal.timeout`. `fastify-keygate-limits-notimeout` is the same with that timer off (`createClient({ commandOptions: { timeout: 0 } })`): the limiter keeps its own deadline (`timeoutMs`, 250 ms by default), so the client's is not needed for it.",
      "`fastify-keygate-limits-leased` is `fastify-keygate-limits` (node-redis defaults) through a `LeasedRateLimiter`: it takes slices of the key's window from Redis instead of one EVALSHA per request. `fastify-keygate-credits-redis` and `fastify-keygate-credits-pg` hold one credit of the key's funded account on a `RedisCreditLedger` or a `PostgresCreditLedger` (pg pool, default size) before the handler and settle it after (Fastify's `credits` option); their `-leased` variants put a `LeasedCreditLedger` in front. Their store round trips (Redis commands; PostgreSQL statements, BEGIN and COMMIT included) are counted in the server per round. `fastify-keygate-limits-memory` and `fastify-keygate-credits-memory` keep the same limit and credits in the server's memory (`MemoryRateLimiter`, `MemoryCreditLedger`): what the features cost with no store at all, the floor a leased variant can reach.",
      'The peer stack is what an Express user assembles today: `express-ipfilter` (allow list `127.0.0.1`) in front of `passport-headerapikey` whose verify callback looks the key up by its SHA-256 digest in a `Map`, then a permission check.',
    );
  }
  sections.push(
    '## Floods',
    `**Malformed keys.** ${int(flood.malformed.sent)} malformed keys (a changed character, a wrong prefix, a wrong mode, a wrong length, a character outside base62; one fifth each) against a store that counts every \`peek\` and \`findByHash\`: **${flood.malformed.lookups} lookups**; outcomes ${Object.entries(
      flood.malformed.statuses,
    )
      .map(([c, n]) => `\`${c}\` ${int(n)}`)
      .join(', ')}.`,
    `**Unknown well-formed keys.** ${int(flood.unknown.sent)} distinct made-up keys with valid checksums through a \`CachedKeyStore\` (\`negativeMax\` ${int(flood.unknown.negativeMax)}), ${int(flood.unknown.denied)} answered \`invalid_api_key\`. RSS after a forced GC as the flood goes on:`,
    table(
      ['keys sent', 'RSS MiB', 'negative-cache entries'],
      flood.unknown.samples.map((s) => [int(s.sent), fixed(s.rssMb, 1), int(s.negativeEntries)]),
    ),
  );
  if (profiles) {
    const variants = Object.keys(profiles);
    const owners = [...new Set(variants.flatMap((v) => profiles[v].owners.slice(0, 8).map((o) => o.name)))];
    const share = (v, name) => profiles[v].owners.find((o) => o.name === name)?.percent ?? 0;
    sections.push(
      '## CPU profile of the request path',
      `\`node --cpu-prof\` on each keygate server and on the same framework's no-op server, ${options.profileSeconds} s each under the same load. Share of the server's busy (non-idle) CPU time by owner of the code:`,
      table(
        ['owner', ...variants],
        [
          ...owners.map((name) => [name, ...variants.map((v) => fixed(share(v, name), 1))]),
          ['*busy CPU µs per request*', ...variants.map((v) => fixed(profiles[v].busyPerRequest, 1))],
          ['*main thread idle, % of wall time*', ...variants.map((v) => fixed(profiles[v].idle, 1))],
          ['*samples*', ...variants.map((v) => int(profiles[v].samples))],
        ],
      ),
      `keygate's direct cost per request, from these profiles (its own code, the SHA-256 of the key, and lru-cache): ${variants
        .filter((v) => v.endsWith('-keygate'))
        .map((v) => {
          const direct = DIRECT.map((o) => profiles[v].owners.find((x) => x.name === o)?.perRequest ?? 0).reduce(
            (a, b) => a + b,
            0,
          );
          return `${v} ${fixed(direct, 1)} µs of ${fixed(profiles[v].busyPerRequest, 1)} µs (${fixed((100 * direct) / profiles[v].busyPerRequest, 1)}%)`;
        })
        .join(', ')}. Times under the profiler run longer than without it; the shares are what carries over.`,
      "What remains of keygate's own code (self time; adapter and core), top functions per server:",
      table(
        ['server', 'function (dist file:line)', '% of busy time'],
        variants
          .filter((v) => v.endsWith('-keygate'))
          .flatMap((v) => profiles[v].keygate.slice(0, 6).map((o) => [v, `\`${o.name}\``, fixed(o.percent, 2)])),
      ),
    );
  }
  if (http && profiles) sections.push(...whereTheTimeGoes(http, profiles));
  if (http && Object.values(http).some((r) => r.post)) {
    sections.push(
      '## The framework path: GET and POST',
      `keygate against each framework's own no-op middleware, from the HTTP A/B above (the same rounds): ${frameworkMethod(options, machine)} Below the tables, a CPU profile of each keygate server that missed 0.95 on a route, beside its framework's no-op server on the same route.`,
      frameworkLines(http, results.httpProfiles).join('\n').trim(),
    );
  }
  sections.push(...budgetSections(results));
  if (scale) sections.push(...scaleSection(scale));
  return `${sections.join('\n\n')}\n`;
}

// keygate's direct cost in a profile: its own code, the key's SHA-256 and lru-cache.
const DIRECT = ['keygate', SHA256_OWNER, 'lru-cache'];

/**
 * For each framework: the CPU per request the 0.93 target leaves keygate, the measured difference from
 * bare, and that difference split by owner. `noop − bare` is what the framework charges for any
 * middleware; the rest (keygate − noop) is split with the two servers' profiles: each owner's share of
 * a profile applied to that server's CPU per request measured without the profiler, keygate's server
 * minus the no-op's.
 */
function whereTheTimeGoes(http, profiles) {
  const rows = [];
  const missed = [];
  for (const [a, b, limit] of COMPARISONS) {
    const framework = b.replace(/-bare$/, '');
    const noop = `${framework}-noop`;
    if (b !== `${framework}-bare` || !profiles[a] || !profiles[noop] || !http[a].cpu.length) continue;
    const cpu = (v) => median(http[v].cpu);
    const part = (v, names) =>
      (cpu(v) *
        names.map((o) => profiles[v].owners.find((x) => x.name === o)?.percent ?? 0).reduce((x, y) => x + y, 0)) /
      100;
    const added = (names) => part(a, names) - part(noop, names);
    const direct = added(DIRECT);
    const writes = added(['socket writes (syscalls)']);
    const gc = added(['(garbage collector)']);
    const total = cpu(a) - cpu(b);
    const framed = cpu(noop) - cpu(b);
    const ratio = roundRatio(http, a, b);
    if (ratio < limit) missed.push(framework);
    rows.push([
      framework,
      `${fixed(ratio)} (${ratio >= limit ? 'met' : 'missed'})`,
      fixed(cpu(b), 1),
      fixed(cpu(b) * (1 / limit - 1), 2),
      fixed(total, 2),
      fixed(framed, 2),
      `${fixed(direct, 2)} (SHA-256 ${fixed(added([SHA256_OWNER]), 2)})`,
      fixed(writes, 2),
      fixed(gc, 2),
      fixed(total - framed - direct - writes - gc, 2),
    ]);
  }
  if (rows.length === 0) return [];
  return [
    "## Where keygate's time goes, and why a target is missed",
    `keygate / bare ≥ 0.93 allows keygate 7.5% of the bare server's CPU per request. The measured difference keygate − bare is split here: what the framework charges for running any middleware of keygate's kind (no-op − bare), keygate's own work (its code, the key's SHA-256 and lru-cache), socket writes, garbage collection and the rest (the framework's and Node's code, Express's ETag hashing included), each the difference between the keygate server's and the no-op server's profile shares applied to their CPU per request measured without the profiler. Profiles are samples: a row's parts carry a few tenths of a µs of noise.${missed.length ? ` Missed in this run: ${missed.join(', ')}.` : ''}`,
    table(
      [
        'framework',
        'keygate / bare',
        'bare CPU µs',
        'allowance at 0.93 µs',
        'keygate − bare µs',
        'no-op − bare µs',
        "keygate's own work µs",
        'socket writes µs',
        'GC µs',
        'the rest µs',
      ],
      rows,
    ),
  ];
}

/** The scale run (`npm run bench:scale`, bench/SCALE.json) in brief; bench/SCALE.md has all of it. */
function scaleSection(scale) {
  return [
    '## A million keys',
    `From \`npm run bench:scale\` (bench/SCALE.md has every figure and the query plan), run ${scale.startedAt.slice(0, 16).replace('T', ' ')} UTC, ${fixed(scale.seconds, 0)} s${scale.load ? `, load average ${fixed(scale.load[0], 1)} at the start` : ''}: ${int(scale.total)} keys per store, a working set of ${int(scale.setSize)} requested with a Zipf (s = 1) distribution through \`CachedKeyStore\`.`,
    table(
      [
        'store',
        'bulk load s',
        'cold p50 ms',
        'cold p99 ms',
        'cached / in-memory',
        'hit ratio at bound 100,000',
        'RSS MiB per 100,000 cached (R²)',
        'heap MiB per 100,000 cached (R²)',
      ],
      SCALE_STORES.map(([name, store]) => {
        const s = scale.stores[store];
        const rss = growthPer100k(s.zipf);
        const heap = growthPer100k(s.zipf, 'heapGrowthMiB');
        return [
          name,
          fixed(s.load.seconds, 1),
          fixed(s.cold.p50Ms, 3),
          fixed(s.cold.p99Ms, 3),
          fixed(s.throughput.ratio),
          fixed(s.zipf.at(-1).hitRatio, 3),
          `${fixed(rss.perHundredThousandMiB, 1)} (${fixed(rss.r2, 3)})`,
          `${fixed(heap.perHundredThousandMiB, 1)} (${fixed(heap.r2, 3)})`,
        ];
      }),
    ),
  ];
}

/**
 * The report of `node bench/run.mjs --only credits` (bench/CREDITS.md): row 10's figures alone, measured
 * in one run of their own (the cached key they are compared with runs in the same rounds).
 */
export function renderCredits({ machine, options, micro, credits, steal, seconds }) {
  return `${[
    '# keygate benchmark results: prepaid credits (check row 10)',
    `Written by \`node bench/run.mjs --only credits${options.quick ? ' --quick' : ''}\` on ${machine.date}, in ${fixed(seconds, 0)} s. ${machine.cpu}, ${machine.cores} cores; Node ${machine.node} (${machine.platform}); load average ${machine.load} when it started. The hypervisor took back (steal time) ${fixed(steal, 1)}% of CPU time during the micro-benchmarks. \`npm run bench\` measures the same rows within its full run.`,
    '## Targets',
    table(
      ['target', 'measured (median)', 'verdict', 'where the time goes (same run)'],
      creditTargets({ micro, credits }).map((c) => [c.target, c.measured, c.verdict, c.why ?? '']),
    ),
    '## Micro-benchmarks',
    `tinybench, ${options.microRounds} rounds of ${options.microTime} ms per task, task order reversed every other round; each sample is a batch of 1,000 calls. Median of the round medians, and the lowest and highest round median, in µs per call.`,
    table(
      ['group', 'case', 'median µs', 'min-max µs'],
      micro.map((r) => [r.group, r.name, us(r.median), `${us(r.min)}-${us(r.max)}`]),
    ),
  ].join('\n\n')}\n`;
}
