// `keygate doctor`: from outside, a running service that believes a forwarding header from anyone is
// caught with a test key whose allow list holds only a spoofed address; from inside, the store's keys
// and the CLI's secrets are checked. In-process (runCli), against the example service's app.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyManager, MemoryKeyStore } from 'keygate';
import { clientIp, withApiKeyAuth } from 'keygate/fetch';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familiesAllowedWhole } from '../../cli/doctor/allow-all.js';
import type { Finding } from '../../cli/doctor/finding.js';
import { runCli } from '../../cli/main.js';
import { openStore } from '../../cli/open-store.js';
import { trustProxyOf } from '../../examples/email-verification/settings.js';
import { ACCOUNT, ALL, type Service, startService } from '../examples/email-verification/service.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-doctor-'));
const pgUp = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redisUp = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const SCHEMA = `keygate_doctor_${RUN_ID}`;
const PREFIX = `keygate:test:doctor${RUN_ID}:`;
const SPOOF = '203.0.113.7';
const LONG_SECRET = 'a-dashboard-secret-of-more-than-32-bytes';
const LONG_PEPPER = 'a-pepper-of-more-than-thirty-two-bytes!!';
const DAY_MS = 86_400_000;

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (pgUp) {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await admin.end();
  }
  if (redisUp) {
    const client = await createClient({ url: REDIS_URL }).connect();
    const keys = (await client.sendCommand(['KEYS', `${PREFIX}*`])) as string[];
    if (keys.length > 0) await client.sendCommand(['DEL', ...keys]);
    client.destroy();
  }
});

async function doctor(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['doctor', ...argv], {
    env,
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
  });
  const findings = (): Finding[] => JSON.parse(stdout);
  return { code, stdout, stderr, findings };
}

const ids = (findings: Finding[]) => findings.map((f) => f.id);

describe('doctor --url: a forwarded-for header believed from anyone', () => {
  // The example service as TRUST_PROXY sets it: `true` (accepted on a loopback HOST) believes
  // X-Forwarded-For from whoever connects; unset, the peer address is the client's.
  const services: Service[] = [];
  let spoofable: Service;
  let safe: Service;
  let probeKey: string;
  let safeProbeKey: string;

  beforeAll(async () => {
    spoofable = await startService('memory', 1000, () => ({ trustProxy: trustProxyOf('true', '127.0.0.1') }));
    services.push(spoofable);
    safe = await startService('memory', 1000, () => ({ trustProxy: trustProxyOf(undefined, '127.0.0.1') }));
    services.push(safe);
    const probe = { accountId: ACCOUNT, name: 'doctor', mode: 'test', permissions: ALL, allowedIps: [`${SPOOF}/32`] };
    probeKey = (await spoofable.keys.create(probe as never)).secret;
    safeProbeKey = (await safe.keys.create(probe as never)).secret;
  }, 60_000);
  afterAll(async () => {
    for (const service of services) await service.close();
  });

  it('reports forwarded_for_spoofable (an error, exit 6) against the example started with TRUST_PROXY=true', async () => {
    const run = await doctor(['--url', `${spoofable.url}/v1/account`, '--json'], { KEYGATE_DOCTOR_KEY: probeKey });
    expect(run.code).toBe(6);
    const spoofed = run.findings().filter((f) => f.id === 'forwarded_for_spoofable');
    expect(spoofed).toHaveLength(1);
    expect(spoofed[0]).toMatchObject({ severity: 'error', message: expect.stringContaining('X-Forwarded-For') });
    expect(spoofed[0]?.fix).toContain("app.set('trust proxy', 'loopback')");
    // Express reads neither Forwarded nor X-Real-IP: those two were refused like the plain request.
    expect(run.findings().find((f) => f.id === 'forwarded_for')?.message).toContain('Forwarded, X-Real-IP');
  });

  it('reports no spoofing (exit 0) against the example started without TRUST_PROXY', async () => {
    const run = await doctor(['--url', `${safe.url}/v1/account`, '--key', safeProbeKey, '--json']);
    expect(run.code).toBe(0);
    expect(ids(run.findings())).toEqual(['forwarded_for']);
    expect(run.findings()[0]).toMatchObject({ severity: 'ok', fix: '' });
    expect(run.findings()[0]?.message).toContain('X-Forwarded-For, Forwarded, X-Real-IP');
  });

  it('prints one line per finding with its fix on the next, and never the key', async () => {
    const run = await doctor(['--url', `${spoofable.url}/v1/account`, '--key', probeKey]);
    expect(run.code).toBe(6);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^error {2}forwarded_for_spoofable {2}a request claiming 203\.0\.113\.7 in X-Forwarded-For/,
    );
    expect(lines[1]).toMatch(/^ {7}fix: trust only your proxy's address/);
    expect(lines.at(-1)).toBe('1 error, 0 warnings, 1 ok');
    expect(run.stdout + run.stderr).not.toContain(probeKey);
    expect(run.stdout + run.stderr).not.toContain(probeKey.slice(8));
  });

  it.skipIf(!redisUp)('with --account as well, checks the store and the secrets after the service', async () => {
    const store = `${REDIS_URL}?prefix=${encodeURIComponent(PREFIX)}`;
    const run = await doctor(
      ['--url', `${safe.url}/v1/account`, '--store', store, '--account', `acct_doctor_${RUN_ID}_none`, '--json'],
      { KEYGATE_DOCTOR_KEY: safeProbeKey, KEYGATE_PEPPER: LONG_PEPPER },
    );
    expect(run.code).toBe(0);
    expect(ids(run.findings())).toEqual(['forwarded_for', 'pepper', 'dashboard_secret', 'keys']);
  });

  it('sends the key as Bearer with --header authorization', async () => {
    const run = await doctor(['--url', `${safe.url}/v1/account`, '--header', 'authorization', '--json'], {
      KEYGATE_DOCTOR_KEY: safeProbeKey,
    });
    // The example reads x-api-key only: a Bearer key is missing, so the probe cannot tell, and says so.
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({ field: '--key', message: expect.stringContaining('401') });
  });

  it("refuses to judge (exit 1, field --key) with a key whose allow list holds this machine's address", async () => {
    const open = await safe.keys.create({ accountId: ACCOUNT, name: 'open', mode: 'test', permissions: ALL });
    const run = await doctor(['--url', `${safe.url}/v1/account`, '--key', open.secret, '--json']);
    expect(run.code).toBe(1);
    const error = JSON.parse(run.stderr).error;
    expect(error).toMatchObject({ code: 'invalid_input', field: '--key' });
    expect(error.message).toContain('answered 200, not 403 ip_not_allowed');
    expect(error.message).toContain(`--allow ${SPOOF}/32`);
    expect(run.stderr).not.toContain(open.secret);
  });

  it('takes a test key only: a live key is refused before any request (exit 1)', async () => {
    const live = await safe.keys.create({ accountId: ACCOUNT, name: 'live probe', mode: 'live', allowedIps: [SPOOF] });
    const before = (await safe.keys.usage(live.key.id)).denied;
    const run = await doctor(['--url', `${safe.url}/v1/account`, '--key', live.secret, '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({ field: '--key', message: expect.stringContaining('live') });
    expect(run.stderr).not.toContain(live.secret);
    expect((await safe.keys.usage(live.key.id)).denied).toBe(before);
  });

  it.each([
    [['--url', 'ftp://example.test/'], '--url'],
    [['--url', 'http://127.0.0.1:1/'], '--key'],
    [['--key', 'mk_test_x'], '--url'],
    [['--url', 'http://127.0.0.1:1/', '--spoof', 'not-an-ip'], '--spoof'],
  ])('%j is refused naming %s', async (argv, field) => {
    const run = await doctor([...argv, '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({ code: 'invalid_input', field });
  });

  it('a service that cannot be reached is refused naming --url', async () => {
    const run = await doctor(['--url', 'http://127.0.0.1:1/v1/account', '--json'], { KEYGATE_DOCTOR_KEY: probeKey });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({
      field: '--url',
      message: expect.stringContaining('could not reach'),
    });
  });
});

const pgUrl = new URL(PG_URL);
pgUrl.searchParams.set('schema', SCHEMA);
const STORES = [
  { name: 'pglite', url: `pglite:${join(dir, 'db')}`, up: true },
  { name: 'postgres', url: pgUrl.toString(), up: pgUp },
  { name: 'redis', url: `${REDIS_URL}?prefix=${encodeURIComponent(PREFIX)}`, up: redisUp },
];
const GOOD_ENV = { KEYGATE_DASHBOARD_SECRET: LONG_SECRET, KEYGATE_PEPPER: LONG_PEPPER };

let accounts = 0;
const freshAccount = () => `acct_doctor_${RUN_ID}_${++accounts}`;

/**
 * An account's keys, made through the store the CLI opens: one live key made 100 days ago (by a
 * manager whose clock is 100 days behind) with no allow list and no rate limit, never used; one live
 * key made now with both; a test key made now with neither; and, made 100 days ago like the first,
 * one that has expired since and one that was revoked. Only the first is worth a finding.
 */
async function seed(url: string, accountId: string) {
  const opened = await openStore(url);
  try {
    const then = new KeyManager({ store: opened.store, clock: () => Date.now() - 100 * DAY_MS });
    const now = new KeyManager({ store: opened.store });
    const old = (await then.create({ accountId, name: 'old open', mode: 'live' })).key;
    const fine = (
      await now.create({
        accountId,
        name: 'fine',
        mode: 'live',
        allowedIps: ['10.0.0.0/8'],
        rateLimit: { limit: 100, windowMs: 60_000 },
      })
    ).key;
    const sandbox = (await now.create({ accountId, name: 'sandbox', mode: 'test' })).key;
    const expiresAt = new Date(Date.now() - 50 * DAY_MS);
    await then.create({ accountId, name: 'expired', mode: 'live', expiresAt });
    const revoked = (await then.create({ accountId, name: 'revoked', mode: 'live' })).key;
    await now.revoke(revoked.id);
    return { old, fine, sandbox };
  } finally {
    await opened.close();
  }
}

describe.each(STORES)('doctor --account on $name', ({ url, up }) => {
  it.skipIf(!up)(
    "warns of an old, unused live key's missing allow list and rate limit, and nothing else (exit 0)",
    async () => {
      const account = freshAccount();
      const { old } = await seed(url, account);
      const run = await doctor(['--store', url, '--account', account, '--json'], GOOD_ENV);
      expect(run.code).toBe(0);
      const keyed = run.findings().filter((f) => f.keyId !== undefined);
      expect(keyed.map((f) => [f.id, f.severity, f.keyId])).toEqual([
        ['key_no_allow_list', 'warn', old.id],
        ['key_no_rate_limit', 'warn', old.id],
        ['key_rotation_due', 'warn', old.id],
        ['key_unused', 'warn', old.id],
      ]);
      expect(keyed[0]?.fix).toBe(
        `keygate keys update ${old.id} --allow <the client's address or CIDR> (repeat for each)`,
      );
      expect(keyed[2]?.message).toContain('100 days old');
      expect(keyed[3]?.fix).toBe(`if nothing uses it any more: keygate keys revoke ${old.id} --quiet-for 90d`);
      expect(ids(run.findings().filter((f) => f.keyId === undefined))).toEqual(['pepper', 'dashboard_secret']);
    },
    60_000,
  );

  it.skipIf(!up)(
    'makes the gaps errors (exit 6) for the modes --require-allow-list and --require-rate-limit name',
    async () => {
      const account = freshAccount();
      const { old, sandbox } = await seed(url, account);
      const run = await doctor(
        ['--store', url, '--account', account, '--require-allow-list', 'live', '--require-rate-limit', 'all', '--json'],
        GOOD_ENV,
      );
      expect(run.code).toBe(6);
      const errors = run.findings().filter((f) => f.severity === 'error');
      expect(errors.map((f) => [f.id, f.keyId])).toEqual([
        ['key_no_allow_list', old.id],
        ['key_no_rate_limit', old.id],
        ['key_no_rate_limit', sandbox.id],
      ]);
    },
    60_000,
  );

  it.skipIf(!up)(
    'reports a key unused only past --unused-for, and an account without keys as ok',
    async () => {
      const account = freshAccount();
      await seed(url, account);
      const longer = await doctor(['--store', url, '--account', account, '--unused-for', '200d', '--json'], GOOD_ENV);
      expect(ids(longer.findings())).not.toContain('key_unused');
      expect(ids(longer.findings())).toContain('key_rotation_due');
      const empty = await doctor(['--store', url, '--account', freshAccount(), '--json'], GOOD_ENV);
      expect(empty.code).toBe(0);
      expect(empty.findings().find((f) => f.id === 'keys')?.message).toMatch(/has no working keys/);
    },
    60_000,
  );
});

describe('doctor: the pepper and the dashboard secret', () => {
  it("reads a pglite folder's dashboard-secret file as dashboard link does: too short is an error (exit 6)", async () => {
    const folder = join(dir, 'short-secret');
    await (await openStore(`pglite:${folder}`)).close();
    const short = 'only-twenty-one-bytes';
    writeFileSync(join(folder, 'dashboard-secret'), `${short}\n`);
    const run = await doctor(['--store', `pglite:${folder}`, '--json']);
    expect(run.code).toBe(6);
    expect(run.findings().map((f) => [f.id, f.severity])).toEqual([
      ['dashboard_secret_short', 'error'],
      ['no_pepper', 'warn'],
    ]);
    expect(run.findings()[0]?.message).toContain(`${join(folder, 'dashboard-secret')} is 21 bytes`);
    expect(run.stdout).not.toContain(short);
  }, 60_000);

  it('checks KEYGATE_DASHBOARD_SECRET and a short --pepper without opening the store', async () => {
    const folder = join(dir, 'never-opened');
    const run = await doctor(['--store', `pglite:${folder}`, '--pepper', 'short-pepper', '--json'], {
      KEYGATE_DASHBOARD_SECRET: 'x'.repeat(31),
    });
    expect(run.code).toBe(6);
    expect(ids(run.findings())).toEqual(['dashboard_secret_short', 'pepper_short']);
    expect(run.findings()[0]?.message).toContain('KEYGATE_DASHBOARD_SECRET is 31 bytes');
    expect(run.stdout).not.toContain('short-pepper');
    expect(existsSync(folder)).toBe(false);
  });

  it('with 32-byte secrets and no dashboard secret anywhere, every finding is ok (exit 0)', async () => {
    const run = await doctor(['--store', 'redis://127.0.0.1:1', '--json'], { KEYGATE_PEPPER: 'p'.repeat(32) });
    expect(run.code).toBe(0);
    expect(run.findings().map((f) => [f.id, f.severity])).toEqual([
      ['pepper', 'ok'],
      ['dashboard_secret', 'ok'],
    ]);
  });

  it.each([
    [['--require-allow-list', 'live'], '--require-allow-list'],
    [['--account', 'a', '--require-rate-limit', 'some'], '--require-rate-limit'],
    [['--unused-for', '90'], '--unused-for'],
  ])('%j is refused naming %s, before the store opens', async (argv, field) => {
    const run = await doctor(['--store', 'redis://127.0.0.1:1', ...argv, '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({ code: 'invalid_input', field });
  });
});

/**
 * A Fetch-API service on Node (keygate/fetch) that takes the client address from `header` alone,
 * the way `clientIp.cloudflare` reads CF-Connecting-IP: right behind the proxy that sets it, wrong
 * on a port any client reaches. Its store holds one test key allowed from SPOOF only.
 */
async function headerService(header: string): Promise<{ url: string; key: string; close(): Promise<void> }> {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const { secret } = await keys.create({ accountId: 'acct_fetch', name: 'doctor', mode: 'test', allowedIps: [SPOOF] });
  const resolve =
    header === 'CF-Connecting-IP'
      ? clientIp.cloudflare
      : (request: Request) => request.headers.get(header) ?? undefined;
  const handle = withApiKeyAuth(async () => Response.json({ ok: true }), { store, clientIp: resolve });
  const server: Server = createServer(async (req, res) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const response = await handle(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/account`,
    key: secret,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describe('doctor --url: the client-address headers a CDN or platform sets', () => {
  it.each(['CF-Connecting-IP', 'True-Client-IP', 'Fly-Client-IP'])(
    'reports forwarded_for_spoofable naming %s against a service that believes it from anyone',
    async (header) => {
      const service = await headerService(header);
      try {
        const run = await doctor(['--url', service.url, '--json'], { KEYGATE_DOCTOR_KEY: service.key });
        expect(run.code).toBe(6);
        const spoofed = run.findings().filter((f) => f.id === 'forwarded_for_spoofable');
        expect(spoofed).toHaveLength(1);
        expect(spoofed[0]?.message).toContain(`in ${header} passed`);
        expect(spoofed[0]?.fix).toContain(`\`${header}\``);
        const refused = run.findings().find((f) => f.id === 'forwarded_for')?.message ?? '';
        expect(refused).toContain('X-Forwarded-For');
        expect(refused).not.toContain(header);
        expect(run.stdout + run.stderr).not.toContain(service.key);
      } finally {
        await service.close();
      }
    },
  );
});

describe('doctor --account: an allow list that admits every address of a family', () => {
  it.each([
    [['10.0.0.0/8'], []],
    [['0.0.0.0/1'], []],
    [['0.0.0.0/0'], ['IPv4']],
    [['0.0.0.0/1', '128.0.0.0/1'], ['IPv4']],
    [['0.0.0.0/2', '64.0.0.0/2', '128.0.0.0/1', '2001:db8::/32'], ['IPv4']],
    [['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/3', '224.0.0.0/4', '240.0.0.0/4'], ['IPv4']],
    [['0.0.0.0/1', '128.0.0.0/2', '224.0.0.0/3'], []],
    [['::ffff:0:0/96'], ['IPv4']],
    [['::ffff:0.0.0.0/97', '128.0.0.0/1'], ['IPv4']],
    [['::/0'], ['IPv4', 'IPv6']],
    [
      ['::/1', '8000::/1'],
      ['IPv4', 'IPv6'],
    ],
    [['::/1'], ['IPv4']],
    [['8000::/1'], []],
    [
      ['0.0.0.0/0', '::/0'],
      ['IPv4', 'IPv6'],
    ],
  ])('%j admits every address of %j', (list, families) => {
    expect(familiesAllowedWhole(list)).toEqual(families);
  });

  const lists = [['0.0.0.0/0', '::/0'], ['0.0.0.0/1', '128.0.0.0/1'], ['::/0'], ['::ffff:0:0/96', '2001:db8::/32']];

  it('warns of each live key whose list does (exit 0), never of a narrower list or a test key', async () => {
    const url = `sqlite:${join(dir, 'allow-all.db')}`;
    const account = freshAccount();
    const opened = await openStore(url);
    const wide: string[] = [];
    let narrow = '';
    try {
      const keys = new KeyManager({ store: opened.store });
      const rateLimit = { limit: 10, windowMs: 1000 };
      for (const allowedIps of lists) {
        wide.push(
          (await keys.create({ accountId: account, name: 'wide', mode: 'live', allowedIps, rateLimit })).key.id,
        );
      }
      narrow = (
        await keys.create({ accountId: account, name: 'narrow', mode: 'live', allowedIps: ['0.0.0.0/1'], rateLimit })
      ).key.id;
      await keys.create({ accountId: account, name: 'sandbox', mode: 'test', allowedIps: ['0.0.0.0/0'], rateLimit });
    } finally {
      await opened.close();
    }
    const run = await doctor(['--store', url, '--account', account, '--json'], GOOD_ENV);
    expect(run.code).toBe(0);
    const flagged = run.findings().filter((f) => f.id === 'key_allow_list_allows_all');
    expect(flagged.map((f) => [f.keyId, f.severity]).sort()).toEqual(wide.map((id) => [id, 'warn']).sort());
    const messageOf = (id: string | undefined) => flagged.find((f) => f.keyId === id)?.message;
    expect(messageOf(wide[0])).toContain('every IPv4 and IPv6 address (0.0.0.0/0, ::/0)');
    expect(messageOf(wide[1])).toContain('every IPv4 address (0.0.0.0/1, 128.0.0.0/1)');
    expect(messageOf(wide[2])).toContain('every IPv4 and IPv6 address (::/0)');
    expect(messageOf(wide[3])).toContain('every IPv4 address (::ffff:0:0/96, 2001:db8::/32)');
    expect(flagged.find((f) => f.keyId === wide[0])?.fix).toContain(`keygate keys update ${wide[0]} --allow`);
    expect(run.findings().some((f) => f.keyId === narrow)).toBe(false);

    const required = await doctor(
      ['--store', url, '--account', account, '--require-allow-list', 'live', '--json'],
      GOOD_ENV,
    );
    expect(required.code).toBe(6);
    expect(
      required
        .findings()
        .filter((f) => f.severity === 'error')
        .map((f) => f.keyId)
        .sort(),
    ).toEqual([...wide].sort());
  }, 60_000);
});
