// The soak run (`npm run soak -- --seconds 20`): two Express + keygate processes over PostgreSQL and
// Redis, a bounded load generator on 127.0.0.1 sending a known mix for a fixed time, a revocation in
// the middle, then every outcome checked against the expected one and the usage counts read back
// from the stores against what was sent. Exit code 1 when a target is missed.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { generateKey, KeyManager } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import { type UsageOutcome, utcDay } from 'keygate/store-kit';
import pg from 'pg';
import { createClient } from 'redis';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '32' },
    'max-requests': { type: 'string', default: '2000000' },
    app: { type: 'string' },
  },
});
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const MAX_REQUESTS = Number(args['max-requests']);
const APP_BUNDLE = args.app as string;
// A request sent this long after the revoke call returned must be refused (the documented bound
// while the change channel is up is under 1 s; measured: a few ms).
const REVOCATION_BOUND_MS = 1_000;
const PG_URL = process.env.KEYGATE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.KEYGATE_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN = `${process.pid.toString(36)}${Date.now().toString(36)}`;

type StoreName = 'pg' | 'redis';
type Expected = 200 | UsageOutcome;

interface Scenario {
  readonly name: string;
  readonly weight: number;
  /** Header value and forwarded client address for one request. */
  request(keys: SoakKeys, i: number): { key?: string; ip: string };
  /** Expected outcome of a request sent and answered at these times; `undefined` when either answer is right. */
  expect(sentAt: number, answeredAt: number, revocation: Revocation | undefined): Expected | undefined;
  /** The key whose usage the request counts against, if it carries a known key. */
  keyOf?: (keys: SoakKeys) => string;
}

interface SoakKeys {
  listed: { secret: string; id: string };
  readOnly: { secret: string; id: string };
  revokedMidRun: { secret: string; id: string };
  revoked: { secret: string; id: string };
}

interface Revocation {
  startedAt: number;
  /** Undefined while the revoke call is running. */
  returnedAt?: number;
}

const inside = (i: number) =>
  [
    `203.0.113.${i % 250}`,
    `2001:db8:${(i % 9).toString(16)}::${(i % 4000).toString(16)}`,
    `::ffff:203.0.113.${i % 200}`,
  ][i % 3] as string;
const outside = (i: number) => [`198.51.100.${i % 250}`, `2001:db9::${(i % 4000).toString(16)}`][i % 2] as string;

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'valid key, listed address',
    weight: 40,
    request: (k, i) => ({ key: k.listed.secret, ip: inside(i) }),
    expect: () => 200,
    keyOf: (k) => k.listed.id,
  },
  {
    name: 'valid key, wrong address',
    weight: 10,
    request: (k, i) => ({ key: k.listed.secret, ip: outside(i) }),
    expect: () => 'ip_not_allowed',
    keyOf: (k) => k.listed.id,
  },
  {
    name: 'missing permission',
    weight: 10,
    request: (k, i) => ({ key: k.readOnly.secret, ip: inside(i) }),
    expect: () => 'insufficient_permissions',
    keyOf: (k) => k.readOnly.id,
  },
  {
    name: 'revoked mid-run',
    weight: 15,
    request: (k, i) => ({ key: k.revokedMidRun.secret, ip: outside(i) }),
    // Answered before the revoke started: allowed. Sent later than the bound after it returned: refused.
    // In between the revocation is in flight and either answer is right (reported apart).
    expect: (sentAt, answeredAt, r) =>
      r === undefined || answeredAt < r.startedAt
        ? 200
        : r.returnedAt !== undefined && sentAt > r.returnedAt + REVOCATION_BOUND_MS
          ? 'revoked_api_key'
          : undefined,
    keyOf: (k) => k.revokedMidRun.id,
  },
  {
    name: 'revoked before the run',
    weight: 5,
    request: (k, i) => ({ key: k.revoked.secret, ip: inside(i) }),
    expect: () => 'revoked_api_key',
    keyOf: (k) => k.revoked.id,
  },
  {
    name: 'unknown key',
    weight: 10,
    request: (_, i) => ({ key: UNKNOWN[i % UNKNOWN.length], ip: inside(i) }),
    expect: () => 'invalid_api_key',
  },
  {
    name: 'malformed key (typo)',
    weight: 5,
    request: (k, i) => ({ key: `${k.listed.secret.slice(0, -1)}${i % 2 ? '!' : '0'}`, ip: inside(i) }),
    expect: () => 'malformed_api_key',
  },
  { name: 'no key', weight: 5, request: (_, i) => ({ ip: inside(i) }), expect: () => 'missing_api_key' },
];
const UNKNOWN = Array.from({ length: 64 }, () => generateKey({ mode: 'live' }));
// A deterministic weighted cycle of 100 slots.
const CYCLE = SCENARIOS.flatMap((s) => Array.from({ length: s.weight }, () => s));

async function openStores() {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  const redis = await createClient({ url: REDIS_URL }).connect();
  const schema = `soak_${RUN}`;
  const prefix = `keygate-soak:${RUN}:`;
  const stores = {
    pg: new PostgresKeyStore({ client: pool, schema }),
    redis: new RedisKeyStore({ client: redis, prefix }),
  };
  await stores.pg.migrate();
  return {
    stores,
    schema,
    prefix,
    async cleanup() {
      stores.pg.close();
      stores.redis.close();
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      let cursor = '0';
      do {
        const [next, found] = (await redis.sendCommand(['SCAN', cursor, 'MATCH', `${prefix}*`, 'COUNT', '1000'])) as [
          string,
          string[],
        ];
        if (found.length) await redis.sendCommand(['DEL', ...found]);
        cursor = next;
      } while (cursor !== '0');
      await pool.end();
      redis.destroy();
    },
  };
}

async function seed(store: PostgresKeyStore | RedisKeyStore): Promise<SoakKeys> {
  const keys = new KeyManager({ store });
  const make = async (name: string, permissions: string[], allowedIps: string[] = []) => {
    const { secret, key } = await keys.create({ accountId: 'acct_soak', name, mode: 'live', permissions, allowedIps });
    return { secret, id: key.id };
  };
  const out = {
    listed: await make('listed', ['email:verify'], ['203.0.113.0/24', '2001:db8::/32']),
    readOnly: await make('read-only', ['email:read']),
    revokedMidRun: await make('revoked-mid-run', ['email:verify']),
    revoked: await make('revoked', ['email:verify']),
  };
  await keys.revoke(out.revoked.id);
  return out;
}

function startApp(env: Record<string, string>): Promise<{ child: ChildProcess; base: string; flushed: Promise<void> }> {
  const child = spawn(process.execPath, [APP_BUNDLE], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NonNullable<ChildProcess['stdout']> });
  let onFlushed: () => void = () => {};
  const flushed = new Promise<void>((resolve) => {
    onFlushed = resolve;
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`app exited with ${code} before listening`)));
    lines.on('line', (line) => {
      const event = JSON.parse(line) as { port?: number; flushed?: boolean };
      if (event.port) resolve({ child, base: `http://127.0.0.1:${event.port}`, flushed });
      if (event.flushed) onFlushed();
    });
  });
}

interface Tally {
  sent: number;
  matched: number;
  misclassified: number;
  inFlightAllowed: number;
  inFlightRefused: number;
  fiveHundreds: number;
  errors: number;
  examples: string[];
}

async function main(): Promise<void> {
  if (!APP_BUNDLE) throw new Error('run through `npm run soak` (test/soak/soak.mjs bundles the app)');
  const { stores, schema, prefix, cleanup } = await openStores();
  const seeded: Record<StoreName, SoakKeys> = { pg: await seed(stores.pg), redis: await seed(stores.redis) };
  const env = {
    SOAK_PG_URL: PG_URL,
    SOAK_PG_SCHEMA: schema,
    SOAK_REDIS_URL: REDIS_URL,
    SOAK_REDIS_PREFIX: prefix,
  };
  const apps = [await startApp(env), await startApp(env)];
  const targets = apps.flatMap((app) =>
    (['pg', 'redis'] as const).map((store) => ({ store, url: `${app.base}/${store}/v1/email/verify` })),
  );

  const tallies = new Map<string, Tally>(
    SCENARIOS.map((s) => [
      s.name,
      {
        sent: 0,
        matched: 0,
        misclassified: 0,
        inFlightAllowed: 0,
        inFlightRefused: 0,
        fiveHundreds: 0,
        errors: 0,
        examples: [],
      },
    ]),
  );
  // What the stores should hold afterwards: store -> key id -> outcome -> count.
  const expectedUsage = new Map<string, number>();
  const revocations: Partial<Record<StoreName, Revocation>> = {};
  const lastAllowAfterReturn: Partial<Record<StoreName, number>> = {};
  const firstRefusalAfterStart: Partial<Record<StoreName, number>> = {};
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  let next = 0;

  const revokeAt = setTimeout(
    async () => {
      await Promise.all(
        (['pg', 'redis'] as const).map(async (name) => {
          const revocation: Revocation = { startedAt: performance.now() };
          revocations[name] = revocation;
          await new KeyManager({ store: stores[name] }).revoke(seeded[name].revokedMidRun.id);
          revocation.returnedAt = performance.now();
        }),
      );
    },
    (SECONDS * 1000) / 2,
  );

  async function worker(): Promise<void> {
    while (performance.now() < deadline && next < MAX_REQUESTS) {
      const i = next++;
      const target = targets[i % targets.length] as (typeof targets)[number];
      const scenario = CYCLE[Math.floor(i / targets.length) % CYCLE.length] as Scenario;
      const keys = seeded[target.store];
      const { key, ip } = scenario.request(keys, i);
      const headers: Record<string, string> = { 'x-forwarded-for': ip };
      if (key !== undefined) headers['x-api-key'] = key;
      const tally = tallies.get(scenario.name) as Tally;
      tally.sent++;
      const sentAt = performance.now();
      let got: Expected;
      try {
        const response = await fetch(target.url, { headers });
        const body = await response.text();
        if (response.status >= 500) tally.fiveHundreds++;
        got = response.status === 200 ? 200 : (JSON.parse(body) as { code: UsageOutcome }).code;
      } catch (err) {
        tally.errors++;
        if (tally.examples.length < 3) tally.examples.push(`network error: ${String(err)}`);
        continue;
      }
      const answeredAt = performance.now();
      const revocation = revocations[target.store];
      const want = scenario.expect(sentAt, answeredAt, revocation);
      if (scenario.name === 'revoked mid-run' && got === 'revoked_api_key' && revocation) {
        const after = answeredAt - revocation.startedAt;
        firstRefusalAfterStart[target.store] = Math.min(firstRefusalAfterStart[target.store] ?? Infinity, after);
      }
      if (scenario.keyOf) {
        const id = `${target.store}|${scenario.keyOf(keys)}|${got === 200 ? 'allowed' : got}`;
        expectedUsage.set(id, (expectedUsage.get(id) ?? 0) + 1);
      }
      if (want === undefined) {
        if (got === 200) tally.inFlightAllowed++;
        else tally.inFlightRefused++;
      } else if (got === want) tally.matched++;
      else {
        tally.misclassified++;
        if (tally.examples.length < 3) tally.examples.push(`${target.store}: expected ${want}, got ${got}`);
      }
      if (scenario.name === 'revoked mid-run' && got === 200 && revocation?.returnedAt !== undefined) {
        const after = sentAt - revocation.returnedAt;
        lastAllowAfterReturn[target.store] = Math.max(lastAllowAfterReturn[target.store] ?? -Infinity, after);
      }
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;
  clearTimeout(revokeAt);

  // Stop the apps: each flushes its usage recorder on SIGTERM.
  for (const app of apps) app.child.kill('SIGTERM');
  await Promise.all(apps.map((a) => a.flushed));

  const today = utcDay(Date.now());
  const firstDay = utcDay(Date.now() - elapsed * 1000 - 60_000);
  let lost = 0;
  let extra = 0;
  const usageRows: string[] = [];
  for (const name of ['pg', 'redis'] as const) {
    for (const [label, key] of Object.entries(seeded[name])) {
      const stored = new Map<string, number>();
      for (const row of await stores[name].getUsage(key.id, firstDay, today)) {
        stored.set(row.outcome, (stored.get(row.outcome) ?? 0) + row.count);
      }
      const outcomes = new Set([
        ...stored.keys(),
        ...[...expectedUsage.keys()]
          .filter((k) => k.startsWith(`${name}|${key.id}|`))
          .map((k) => k.split('|')[2] as string),
      ]);
      for (const outcome of [...outcomes].sort()) {
        const want = expectedUsage.get(`${name}|${key.id}|${outcome}`) ?? 0;
        const have = stored.get(outcome) ?? 0;
        lost += Math.max(0, want - have);
        extra += Math.max(0, have - want);
        usageRows.push(
          `| ${name} | ${label} | ${outcome} | ${want} | ${have} | ${want === have ? 'ok' : 'MISMATCH'} |`,
        );
      }
    }
  }
  await cleanup();

  const all = [...tallies.values()];
  const sum = (f: (t: Tally) => number) => all.reduce((n, t) => n + f(t), 0);
  const sent = sum((t) => t.sent);
  const misclassified = sum((t) => t.misclassified);
  const fiveHundreds = sum((t) => t.fiveHundreds);
  const errors = sum((t) => t.errors);
  const out: string[] = [];
  out.push(
    `keygate soak run: ${new Date().toISOString()}, ${elapsed.toFixed(1)} s, ${CONCURRENCY} concurrent requests,`,
    `2 Express processes x (PostgresKeyStore, RedisKeyStore) behind CachedKeyStore (TTL 60 s), Node ${process.version}`,
    '',
    `requests sent: ${sent} (${Math.round(sent / elapsed)}/s)`,
    `misclassified: ${misclassified}`,
    `unexpected 5xx: ${fiveHundreds}`,
    `network errors: ${errors}`,
    `usage counts lost: ${lost}, extra: ${extra}`,
    '',
    '| scenario | sent | as expected | misclassified | during revocation (allowed / refused) | 5xx |',
    '|---|---|---|---|---|---|',
    ...SCENARIOS.map((s) => {
      const t = tallies.get(s.name) as Tally;
      const during = s.name === 'revoked mid-run' ? `${t.inFlightAllowed} / ${t.inFlightRefused}` : '-';
      return `| ${s.name} | ${t.sent} | ${t.matched} | ${t.misclassified} | ${during} | ${t.fiveHundreds} |`;
    }),
    '',
    ...(['pg', 'redis'] as const).map((name) => {
      const r = revocations[name];
      const last = lastAllowAfterReturn[name];
      const first = firstRefusalAfterStart[name];
      const took = r?.returnedAt === undefined ? '?' : (r.returnedAt - r.startedAt).toFixed(1);
      return `revocation (${name}): revoke call took ${took} ms; first refusal answered ${
        first === undefined ? '?' : first.toFixed(1)
      } ms after the call started; last allowed request sent ${
        last === undefined ? 'before the call returned' : `${last.toFixed(1)} ms after it returned`
      } (bound: ${REVOCATION_BOUND_MS} ms)`;
    }),
    '',
    '| store | key | outcome | sent | counted in store | |',
    '|---|---|---|---|---|---|',
    ...usageRows,
  );
  for (const t of all) for (const e of t.examples) out.push(`example: ${e}`);
  process.stdout.write(`${out.join('\n')}\n`);
  const pass = misclassified === 0 && fiveHundreds === 0 && errors === 0 && lost === 0 && extra === 0 && sent > 0;
  process.stdout.write(pass ? '\nPASS: every target met\n' : '\nFAIL: a target was missed\n');
  process.exitCode = pass ? 0 : 1;
}

await main();
