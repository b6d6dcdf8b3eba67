// The framework-path report (`node bench/run.mjs --only http`): GET and POST-with-JSON for Express,
// Fastify and Hono, bare, with the framework's own no-op middleware, and with keygate; written to
// bench/HTTP.md (raw numbers in bench/HTTP.json).

/** keygate / no-op for GET and POST: the target each framework's keygate server is held to. */
export const HTTP_TARGET = 0.95;
const FRAMEWORKS = ['express', 'fastify', 'hono'];
const ROUTES = { get: 'GET /v1/ping', post: 'POST /v1/email/verify (JSON body)' };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const series = (http, variant, route) => (route === 'get' ? http[variant] : http[variant]?.[route]);

/** Median of the per-round ratios of requests per second, `a` over `b`, for one route. */
export function ratio(http, a, b, route) {
  const x = series(http, a, route)?.rps ?? [];
  const y = series(http, b, route)?.rps ?? [];
  return median(x.map((v, i) => v / y[i]).filter(Number.isFinite));
}

/** Rows `{ framework, route, ratio, versusBare, met }`: keygate / no-op (the target) and keygate / bare. */
export function httpRatios(http) {
  return FRAMEWORKS.flatMap((f) =>
    Object.keys(ROUTES).map((route) => {
      const r = ratio(http, `${f}-keygate`, `${f}-noop`, route);
      return {
        framework: f,
        route,
        ratio: r,
        versusBare: ratio(http, `${f}-keygate`, `${f}-bare`, route),
        met: r >= HTTP_TARGET,
      };
    }),
  );
}

const n = (x, digits = 0) =>
  Number.isFinite(x)
    ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '–';

/**
 * Target rows `{ target, measured, ok, verdict, why }` of `npm run bench`: keygate / no-op for GET and
 * POST on each framework; a miss points at the CPU profiles taken of it (`profiles`, named `variant ROUTE`).
 */
export function frameworkTargets(http, profiles = {}) {
  return httpRatios(http).map((r) => {
    const profiled = [`${r.framework}-noop`, `${r.framework}-keygate`]
      .map((v) => profiles[`${v} ${r.route.toUpperCase()}`])
      .filter(Boolean);
    const keygate = profiles[`${r.framework}-keygate ${r.route.toUpperCase()}`];
    const own = keygate?.owners.find((o) => o.name === 'keygate');
    return {
      target: `HTTP ${r.framework} ${ROUTES[r.route]}: keygate / ${r.framework}'s own no-op middleware ≥ ${HTTP_TARGET}`,
      measured: `${n(r.ratio, 2)} ×`,
      ok: r.met,
      verdict: r.met ? 'met' : `missed (${n(((HTTP_TARGET - r.ratio) / HTTP_TARGET) * 100, 0)}% under)`,
      why:
        `keygate / bare ${n(r.versusBare, 2)}` +
        (r.met || profiled.length < 2
          ? ''
          : `; profiled (section "The framework path"): keygate's own code ${n(own?.perRequest, 2)} µs of ${n(keygate.busyPerRequest, 1)} µs busy per request (${n(own?.percent, 1)}%)`),
    };
  });
}

/** The tables and profile lines of the framework path (GET and POST), shared by both reports. */
export function frameworkLines(http, profiles = {}) {
  const lines = [
    '| framework | route | keygate / no-op (median of per-round ratios) | target | keygate / bare |',
    '| --- | --- | ---: | ---: | ---: |',
    ...httpRatios(http).map(
      (r) =>
        `| ${r.framework} | ${ROUTES[r.route]} | ${n(r.ratio, 2)} | ≥ ${HTTP_TARGET} ${r.met ? '(met)' : '(missed)'} | ${n(r.versusBare, 2)} |`,
    ),
    '',
    '| variant | route | median req/s | min-max req/s | server CPU µs per request (median) |',
    '| --- | --- | ---: | ---: | ---: |',
    ...FRAMEWORKS.flatMap((f) => ['bare', 'noop', 'keygate'].map((v) => `${f}-${v}`))
      .flatMap((variant) =>
        Object.keys(ROUTES).map((route) => {
          const s = series(http, variant, route);
          if (!s || s.rps.length === 0) return null;
          return `| ${variant} | ${route.toUpperCase()} | ${n(median(s.rps))} | ${n(Math.min(...s.rps))}-${n(Math.max(...s.rps))} | ${n(median(s.cpu), 1)} |`;
        }),
      )
      .filter(Boolean),
    '',
  ];
  for (const [name, p] of Object.entries(profiles)) {
    lines.push(
      `CPU profile of ${name} (${n(p.requests)} requests, ${n(p.busyPerRequest, 1)} µs busy per request): ` +
        p.owners
          .slice(0, 8)
          .map((o) => `${o.name} ${n(o.percent, 1)}%`)
          .join(', ') +
        (p.keygate.length > 0
          ? `; in keygate: ${p.keygate
              .slice(0, 5)
              .map((k) => `${k.name} ${n(k.percent, 1)}%`)
              .join(', ')}`
          : ''),
      '',
    );
  }
  return lines;
}

/** The Markdown report of a `--only http` run. */
export function renderHttp({ machine, options, http, profiles = {} }) {
  return [
    '# keygate on the framework path: GET and POST',
    '',
    `Written by \`node bench/run.mjs --only http${options.quick ? ' --quick' : ''}\` on ${machine.date}, in ${n(machine.seconds)} s.`,
    `Host: ${machine.cpu}, ${machine.cores} cores; Node ${machine.node} (${machine.platform}); load average (1 min) ${machine.load[0]} at the start, ${machine.load[1]} at the end.`,
    'Requests per second and CPU microseconds per request belong to this host and its load at the time: compare them only within this run. The ratios are what carries over.',
    '',
    frameworkMethod(options, machine),
    '',
    ...frameworkLines(http, profiles),
  ].join('\n');
}

/** How the framework path is measured, in one paragraph. */
export function frameworkMethod(options, machine) {
  return `autocannon, ${options.connections} connections, the same valid key on every variant (1-entry allow list, permission \`email:verify\`). ${options.httpRounds} round(s) of ${options.httpSeconds} s per variant and route after a ${options.warmup} s warm-up; rounds alternate the variants and the routes (every other round in reverse). The POST carries \`{"email":"a@b.example"}\`, parsed by the framework after the key is checked, and answers with the address. Every server runs in a process of its own${machine.pinned ? ' pinned to CPU 0, autocannon pinned to CPU 1' : ''}.`;
}
