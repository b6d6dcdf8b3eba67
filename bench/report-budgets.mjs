// The rows and sections of `npm run bench` for leased budgets and memory: Fastify with limits on
// Redis and with credits on Redis and PostgreSQL, through the leased wrappers, against Fastify
// without them (HTTP A/B); store round trips per request with and without leases (bench/leases.mjs);
// heap per cached key (bench/memory.mjs). All from the same run as the rest of bench/RESULTS.md.

/** Fastify with leased limits or credits / Fastify without them: the target of each row below. */
export const LEASED_TARGET = 0.85;
/** Store round trips per request for a key far from its limit (or a funded account), leased. */
export const TRIPS_TARGET = 0.1;
/** Heap bytes per cached key (bench/memory.mjs). */
export const HEAP_TARGET = 512;

/**
 * Variants compared with `fastify-keygate` (no limits, no credits): the leased ones carry a target.
 * (`fastify-keygate-limits`, one EVALSHA per request, has its row in report.mjs.)
 */
export const LEASED_HTTP = [
  ['fastify-keygate-limits-leased', 'limits on Redis (node-redis defaults) through `LeasedRateLimiter`', true],
  ['fastify-keygate-credits-redis-leased', 'credits on Redis through `LeasedCreditLedger`', true],
  ['fastify-keygate-credits-pg-leased', 'credits on PostgreSQL through `LeasedCreditLedger`', true],
  ['fastify-keygate-credits-redis', 'credits on Redis, a hold and a settle per request', false],
  ['fastify-keygate-credits-pg', 'credits on PostgreSQL, a hold and a settle per request', false],
  ['fastify-keygate-limits-memory', 'the same limits on `MemoryRateLimiter`: no store, the floor of leasing', false],
  ['fastify-keygate-credits-memory', 'credits on `MemoryCreditLedger`: no store, the floor of leasing', false],
];
const BASE = 'fastify-keygate';
const STORES = [
  ['Redis', 'redis'],
  ['PostgreSQL', 'postgres'],
  ['MariaDB', 'mysql'],
];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fixed = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const roundRatio = (http, a, b) => median(http[a].rps.map((x, i) => x / http[b].rps[i]));

/** Target rows `{ target, measured, ok, verdict, why }` for what was measured of the above. */
export function budgetTargets({ http, leases, memory }) {
  const out = [];
  for (const [variant, what, targeted] of LEASED_HTTP) {
    if (!http?.[variant]?.rps.length || !http[BASE]?.rps.length) continue;
    const ratio = roundRatio(http, variant, BASE);
    const ok = !targeted || ratio >= LEASED_TARGET;
    const trips = http[variant].redis.length ? fixed(median(http[variant].redis), 3) : 'n/a';
    out.push({
      target: targeted
        ? `HTTP ${variant} / ${BASE} ≥ ${LEASED_TARGET} (${what})`
        : `HTTP ${variant} / ${BASE} (${what}; stated, no target)`,
      measured: `${fixed(ratio)} ×`,
      ok,
      verdict: targeted
        ? ok
          ? 'met'
          : `missed (${fixed(((LEASED_TARGET - ratio) / LEASED_TARGET) * 100, 0)}% under)`
        : 'stated',
      why: `${trips} store round trips per request in the server; server CPU per request: ${BASE} ${fixed(median(http[BASE].cpu), 1)} µs, ${variant} ${fixed(median(http[variant].cpu), 1)} µs`,
    });
  }
  for (const [name, store] of leases ? STORES : []) {
    const r = leases.results[store];
    for (const [field, plain, what] of [
      ['leasedLimits', 'limits', 'limits, a key far from its limit'],
      ['leasedCredits', 'credits', 'credits, a funded account (hold + settle)'],
    ]) {
      const target = `${name}: store round trips per request, ${what}, leased ≤ ${TRIPS_TARGET}`;
      if (!r || r.skipped) {
        out.push({ target, measured: 'not measured', ok: false, verdict: 'skipped', why: r?.skipped ?? '' });
        continue;
      }
      const levels = Object.keys(r);
      const worst = Math.max(...levels.map((c) => r[c][field]));
      const ok = worst <= TRIPS_TARGET;
      out.push({
        target,
        measured: levels.map((c) => `${fixed(r[c][field], 3)} (×${c})`).join(', '),
        ok,
        verdict: ok ? 'met' : `missed (${fixed(((worst - TRIPS_TARGET) / TRIPS_TARGET) * 100, 0)}% over)`,
        why: `without leases ${levels.map((c) => `${fixed(r[c][plain], 2)} (×${c})`).join(', ')}; ${leases.requests} requests per figure, ×N = N at a time, counted at the client`,
      });
    }
  }
  for (const m of memory ? Object.values(memory.measured) : []) {
    const ok = m.total <= HEAP_TARGET;
    out.push({
      target: `heap per cached key, ${m.shape} record ≤ 0.5 KiB`,
      measured: `${Math.round(m.total)} B`,
      ok,
      verdict: ok ? 'met' : `missed (${fixed(((m.total - HEAP_TARGET) / HEAP_TARGET) * 100, 0)}% over)`,
      why: Object.entries(m.parts)
        .map(([part, bytes]) => `${part} ${Math.round(bytes)} B`)
        .join('; '),
    });
  }
  return out;
}

function table(head, rows) {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** The report's sections on store round trips (leases) and memory per cached key. */
export function budgetSections({ leases, memory }) {
  const sections = [];
  if (leases) {
    sections.push(
      '## Leased budgets: store round trips per request',
      `\`bench/leases.mjs\` (\`runLeases\`): ${leases.requests} requests per figure after one warm-up, N at a time (×N), for a key far from its limit (limit 10¹², one hour) and a billed request of a funded account (hold + settle). Counted at the client: Redis, every command node-redis sends; PostgreSQL, every statement on a pooled connection (BEGIN and COMMIT included); MariaDB, every statement through the pool or a checked-out connection. The leased wrappers' \`close()\` is counted too.`,
      table(
        ['store', 'concurrency', 'limits', 'leased limits', 'credits', 'leased credits'],
        STORES.flatMap(([name, store]) => {
          const r = leases.results[store];
          if (!r) return [];
          if (r.skipped) return [[name, '–', 'skipped', r.skipped, '', '']];
          return Object.entries(r).map(([c, x]) => [
            name,
            `×${c}`,
            fixed(x.limits, 3),
            fixed(x.leasedLimits, 3),
            fixed(x.credits, 3),
            fixed(x.leasedCredits, 3),
          ]);
        }),
      ),
    );
  }
  if (memory) {
    const rows = Object.values(memory.measured);
    sections.push(
      '## Memory per cached key',
      `\`bench/memory.mjs\` (\`runMemory\`): heap growth after a forced GC per key, ${memory.keys.toLocaleString('en-US')} keys cached by \`CachedKeyStore\` and authenticated once each, median of ${memory.runs} run(s), each in a fresh process with \`--expose-gc\`. \`keymanager\` is the record \`KeyManager\` writes with no options; \`realistic\` carries permissions, a three-entry allow list, metadata and a rate limit (bench/memory/shapes.mjs). Parts are measured on their own, so they add up to the whole only roughly.`,
      table(
        ['shape', 'bytes per cached key (median)', 'runs', ...Object.keys(rows[0]?.parts ?? {})],
        rows.map((m) => [
          m.shape,
          String(Math.round(m.total)),
          m.runs.map((x) => Math.round(x)).join(', '),
          ...Object.values(m.parts).map((x) => String(Math.round(x))),
        ]),
      ),
    );
  }
  return sections;
}
