// `npm run bench:dashboard`: the dashboard's key list and key page for an account with 1,000 keys
// and a year of usage, on the embedded store (PGlite) and on PostgreSQL. Reports p50/p95 per page
// and the SQL each page runs, in bench/DASHBOARD.md. Not part of `npm test`.
//   node bench/dashboard.mjs [--requests 200] [--out bench/DASHBOARD.md]
// PostgreSQL comes from KEYGATE_PG_URL (default postgres://postgres@127.0.0.1:5432/test); a
// scratch schema is created and dropped.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { KeyManager } from 'keygate';
import { dashboard } from 'keygate/dashboard';
import { PostgresDashboardStore, PostgresKeyStore } from 'keygate/postgres';
import { dailyTotals, pageOfKeys } from 'keygate/store-kit';
import pg from 'pg';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '200' }, out: { type: 'string' } },
});
const REQUESTS = Number(values.requests);
const OUT = values.out ?? new URL('./DASHBOARD.md', import.meta.url).pathname;
const PG_URL = process.env.KEYGATE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ACCOUNT = 'acct_bench';
const KEYS = 1_000;
const TARGET_MS = 50;
const log = (line) => process.stderr.write(`[bench:dashboard] ${line}\n`);

/** Wraps a pg Pool or a PGlite so that every statement text it runs can be recorded. */
function recording(client) {
  const seen = { on: false, statements: [] };
  const proxy = new Proxy(client, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name === 'query') {
        return (text, ...rest) => {
          if (seen.on) seen.statements.push(String(text).replace(/\s+/g, ' ').trim());
          return value.call(target, text, ...rest);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { proxy, seen };
}

/** 1,000 keys, created through the manager; a year of daily counts per key written in one statement. */
async function seed(store, sql, schema) {
  const keys = new KeyManager({ store });
  const ids = [];
  for (let i = 0; i < KEYS; i++) {
    const { key } = await keys.create({
      accountId: ACCOUNT,
      name: `service-${String(i).padStart(4, '0')}`,
      mode: i % 4 ? 'live' : 'test',
      permissions: ['email:verify', 'email:find'],
      allowedIps: i % 3 ? ['203.0.113.0/24'] : [],
    });
    ids.push(key.id);
  }
  // Allowed requests every day, some denials on a third of the days: about 480,000 rows.
  await sql(
    `INSERT INTO "${schema}".keygate_usage (key_id, account_id, day, outcome, count)
     SELECT k.id, k.account_id, d::date, o.outcome, (random() * 5000)::bigint
       FROM "${schema}".keygate_keys k
       CROSS JOIN generate_series(current_date - 364, current_date, interval '1 day') d
       CROSS JOIN (VALUES ('allowed'), ('ip_not_allowed')) o(outcome)
      WHERE o.outcome = 'allowed' OR extract(doy FROM d)::int % 3 = 0`,
  );
  await sql(
    `INSERT INTO "${schema}".keygate_key_activity (key_id, last_used_at, last_used_ip)
     SELECT id, now() - (random() * interval '2 days'), '203.0.113.9' FROM "${schema}".keygate_keys`,
  );
  await sql(`ANALYZE "${schema}".keygate_keys`);
  await sql(`ANALYZE "${schema}".keygate_usage`);
  await sql(`ANALYZE "${schema}".keygate_key_activity`);
  return { keys, ids };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Times `REQUESTS` requests of `pathOf(i)` (after a warm-up), and records the SQL of one of them. */
async function measure(ui, cookie, pathOf, seen) {
  const send = async (i) => {
    const response = await ui.fetch(new Request(`http://bench.test/dashboard${pathOf(i)}`, { headers: { cookie } }));
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${pathOf(i)} answered ${response.status}: ${body.slice(0, 200)}`);
    return body.length;
  };
  for (let i = 0; i < 20; i++) await send(i);
  seen.statements = [];
  seen.on = true;
  await send(0);
  seen.on = false;
  const statements = [...seen.statements];
  const times = [];
  let bytes = 0;
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const start = performance.now();
    bytes = await send(i);
    times.push(performance.now() - start);
  }
  const cpu = process.cpuUsage(cpuBefore);
  times.sort((a, b) => a - b);
  // CPU time of this process per request: the dashboard, the driver and (PGlite) the database itself,
  // unaffected by other work waiting for the same cores.
  const cpuMs = (cpu.user + cpu.system) / 1000 / REQUESTS;
  return { p50: percentile(times, 50), p95: percentile(times, 95), max: times.at(-1), cpuMs, statements, bytes };
}

async function run(name, client, schema, sql) {
  const { proxy, seen } = recording(client);
  const store = new PostgresKeyStore({ client: proxy, schema });
  await store.migrate();
  log(`${name}: seeding ${KEYS} keys and a year of usage`);
  const started = performance.now();
  const { keys, ids } = await seed(store, sql, schema);
  const rows = (await sql(`SELECT count(*)::int AS n FROM "${schema}".keygate_usage`)).rows[0].n;
  log(`${name}: seeded ${rows} usage rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  // One key mid-rotation, so the key page's rotation status is measured too.
  await keys.rotate(ids[0]);
  const dashboardStore = new PostgresDashboardStore({ client: proxy, schema });
  const ui = dashboard({
    manager: keys,
    store: dashboardStore,
    secret: 'bench-secret-of-at-least-32-bytes!',
    basePath: '/dashboard',
  });
  const signIn = await ui.fetch(new Request(await ui.signInLink({ accountId: ACCOUNT, baseUrl: 'http://bench.test' })));
  const cookie = signIn.headers.getSetCookie()[0].split(';')[0];
  const results = {};
  results['key list (page 1 of 21)'] = await measure(ui, cookie, () => '/', seen);
  results['key list, page 10'] = await measure(ui, cookie, () => '/?page=10', seen);
  results['key list, name filter'] = await measure(ui, cookie, (i) => `/?q=service-0${i % 10}`, seen);
  results['key page'] = await measure(ui, cookie, (i) => `/keys/${ids[1 + (i % (ids.length - 1))]}`, seen);
  results['key page, rotated key'] = await measure(ui, cookie, () => `/keys/${ids[0]}`, seen);
  // The same list through a dashboard store that reads every key of the account, then two reads per
  // key shown (N+1): what the list page cost before the store read one page and many keys at once.
  const perKey = {
    listKeysPage: async (accountId, query) => pageOfKeys(await store.listByAccount(accountId), query),
    getDailyTotalsOfKeys: async (ids, from, to) =>
      dailyTotals((await Promise.all(ids.map((id) => store.getUsage(id, from, to)))).flat()),
    getActivityOfKeys: async (ids) => (await Promise.all(ids.map((id) => store.getActivity(id)))).filter(Boolean),
    markTokenUsed: (tokenId, expiresAt) => dashboardStore.markTokenUsed(tokenId, expiresAt),
    isTokenUsed: (tokenId) => dashboardStore.isTokenUsed(tokenId),
  };
  const fallback = dashboard({
    manager: keys,
    store: perKey,
    secret: 'bench-secret-of-at-least-32-bytes!',
    basePath: '/dashboard',
  });
  const fallbackIn = await fallback.fetch(
    new Request(await fallback.signInLink({ accountId: ACCOUNT, baseUrl: 'http://bench.test' })),
  );
  results['key list without the page and batch reads (before)'] = await measure(
    fallback,
    fallbackIn.headers.getSetCookie()[0].split(';')[0],
    () => '/',
    seen,
  );
  const plan = await sql(
    `EXPLAIN ANALYZE SELECT key_id, array_agg(day - $2::date) AS offsets, array_agg(total) AS totals FROM (
        SELECT key_id, day, sum(count)::float8 AS total FROM "${schema}".keygate_usage
         WHERE key_id = ANY($1::text[]) AND day BETWEEN $2::date AND $3::date GROUP BY key_id, day
      ) per_day GROUP BY key_id`,
    [
      ids.slice(0, 50),
      new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10),
      new Date().toISOString().slice(0, 10),
    ],
  );
  store.close();
  return { name, rows, results, plan: plan.rows.map((r) => r['QUERY PLAN']) };
}

function render(runs) {
  const lines = [
    '# Dashboard benchmark',
    '',
    `\`npm run bench:dashboard\` on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
    `An account with ${KEYS.toLocaleString('en-US')} keys and a year of daily usage per key; each page requested ${REQUESTS} times`,
    `in process through \`ui.fetch\` (signed-in session, full HTML body read) after 20 warm-up requests. Target: p95 under ${TARGET_MS} ms.`,
    `Load average while measuring: ${loads.map((l) => l.toFixed(1)).join(' / ')} (1-minute, at the start and the end; other work shares the machine).`,
    '',
    '| store | page | p50 ms | p95 ms | max ms | CPU ms/request | queries | HTML KiB | target |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const run of runs) {
    for (const [page, r] of Object.entries(run.results)) {
      const meets = r.p95 < TARGET_MS ? 'met' : 'missed';
      lines.push(
        `| ${run.name} | ${page} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} | ${r.cpuMs.toFixed(1)} | ${r.statements.length} | ${(r.bytes / 1024).toFixed(0)} | ${meets} |`,
      );
    }
  }
  lines.push('', `Usage rows: ${runs.map((r) => `${r.name} ${r.rows.toLocaleString('en-US')}`).join(', ')}.`, '');
  lines.push('## What was slow, and the fix', '');
  for (const run of runs) {
    const before = run.results['key list without the page and batch reads (before)'];
    const after = run.results['key list (page 1 of 21)'];
    lines.push(
      `- ${run.name}: the list first read every key of the account (1,000 records) and then the usage and the last use of each key shown, one read each (N+1): ${before.statements.length} queries and ${before.cpuMs.toFixed(1)} ms of CPU per request. With the store reading one page (\`listKeysPage\`: the account index, a window count) and the page's daily totals and last uses in one query each (\`getDailyTotalsOfKeys\`, summed in the database; \`getActivityOfKeys\`): ${after.statements.length} queries and ${after.cpuMs.toFixed(1)} ms of CPU.`,
    );
  }
  lines.push(
    '- The key page reads the key, its 30 days of usage and its last use by primary key (5 queries; 9 for a key being rotated, whose status reads both keys).',
    '- Wall-clock times include the time a request waits for a core: the load average above is that of a machine shared with other work, so p95 there measures the queue as much as the page. CPU ms/request is what a page costs this process (for PGlite the database runs in it too), and the figure to compare with the target on an idle machine.',
    '',
  );
  lines.push('## The SQL each page runs', '');
  const first = runs[0];
  for (const [page, r] of Object.entries(first.results)) {
    lines.push(`### ${page} (${r.statements.length} queries)`, '', '```sql');
    const counts = new Map();
    for (const s of r.statements) counts.set(s, (counts.get(s) ?? 0) + 1);
    for (const [s, n] of counts)
      lines.push(`${n > 1 ? `-- ${n} times\n` : ''}${s.replace(/"keygate_bench_\w+"\./g, '')};`);
    lines.push('```', '');
  }
  lines.push("## Plan of the list page's usage read (PostgreSQL, 50 keys, 30 days)", '', '```');
  lines.push(...(runs.find((r) => r.name === 'PostgreSQL')?.plan ?? first.plan), '```', '');
  return `${lines.join('\n')}\n`;
}

const runs = [];
const loads = [os.loadavg()[0]];
{
  const db = await PGlite.create();
  runs.push(await run('PGlite', db, 'keygate_bench_dash', (text, params) => db.query(text, params)));
  await db.close();
}
{
  const schema = `keygate_bench_dash_${process.pid}`;
  const pool = new pg.Pool({ connectionString: PG_URL, max: 10 });
  try {
    runs.push(await run('PostgreSQL', pool, schema, (text, params) => pool.query(text, params)));
  } catch (err) {
    log(`PostgreSQL skipped: ${err.message}`);
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  }
}
loads.push(os.loadavg()[0]);
writeFileSync(OUT, render(runs));
for (const run of runs) {
  for (const [page, r] of Object.entries(run.results)) {
    log(
      `${run.name.padEnd(10)} ${page.padEnd(44)} p50 ${r.p50.toFixed(1).padStart(6)} ms  p95 ${r.p95.toFixed(1).padStart(6)} ms  ${r.statements.length} queries`,
    );
  }
}
log(`report written to ${OUT}`);
