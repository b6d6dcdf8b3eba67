import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { KeyManager } from 'keygate';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT } from '../../../examples/email-verification/server.js';
import { openStores } from '../../../examples/email-verification/stores.js';
import { PG_URL, RUN_ID, serviceAvailable } from '../../stores/support/services.js';
import { DEMO_CREDITS, main, PGLITE, startMain as start } from './service.js';

const pgUp = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');

/** Runs a printed curl line the way a shell would, with fetch. */
async function runCurl(line: string) {
  const url = line.match(/curl -s (\S+)/)?.[1] ?? '';
  const key = line.match(/x-api-key: ([^']+)'/)?.[1] ?? '';
  const data = line.match(/-d '([^']*)'/)?.[1];
  const headers: Record<string, string> = { 'x-api-key': key };
  if (data !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method: data === undefined ? 'GET' : 'POST', headers, body: data });
  return { status: res.status, json: await res.json() };
}

/** The variables of the README's command line for running behind a proxy (the `HOST=0.0.0.0` one). */
async function documentedProxySetting(): Promise<Record<string, string>> {
  const readme = await readFile(new URL('../../../examples/email-verification/README.md', import.meta.url), 'utf8');
  const line = readme.split('\n').find((l) => /\bHOST=0\.0\.0\.0\b.*npm start/.test(l)) ?? '';
  const assignments = line.slice(0, line.indexOf('npm start')).matchAll(/\b([A-Z_]+)=(\S+)/g);
  return Object.fromEntries([...assignments].map(([, name, value]) => [name, value]));
}

/** Every folder and file under `dir` (itself included) whose mode is not 0700 (folders) or 0600 (files). */
async function looseModes(dir: string) {
  const paths = [dir, ...(await readdir(dir, { recursive: true })).map((name) => join(dir, name))];
  const loose: string[] = [];
  for (const path of paths) {
    const info = await stat(path);
    const mode = info.mode & 0o777;
    if (mode !== (info.isDirectory() ? 0o700 : 0o600)) loose.push(`${relative(dir, path) || '.'} ${mode.toString(8)}`);
  }
  return loose;
}

describe('server.js main()', PGLITE, () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const tempDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keygate-email-server-'));
    dirs.push(dir);
    return dir;
  };

  it('--memory prints a fresh test and live key on every start, each on its own line, with curl lines that work', async () => {
    for (let run = 0; run < 2; run++) {
      const s = await start(['--memory']);
      try {
        expect(s.secrets.map((k) => k.slice(0, 8))).toEqual(['mk_test_', 'mk_live_']);
        expect(s.output).toContain(`${DEMO_CREDITS} credits`);
        const curls = s.lines.filter((line) => line.startsWith('curl '));
        expect(curls.length).toBeGreaterThanOrEqual(3);
        for (const line of curls) {
          const res = await runCurl(line);
          expect(res.status, line).toBe(200);
        }
        const account = await runCurl(curls.at(-1) as string);
        // The live verify (1) and the live contacts search (5) were charged.
        expect(account.json.account.balance).toBe(DEMO_CREDITS - 6);
        // Every request of the calling key is counted: each live curl line, plus this second account call.
        const live = account.json.key.id as string;
        expect(account.json.usage).toMatchObject({ keyId: live, denied: 0, lastUsedIp: '127.0.0.1' });
        expect(account.json.usage.allowed).toBe(
          curls.filter((line) => line.includes(s.secrets[1] as string)).length + 1,
        );
      } finally {
        await s.close();
      }
    }
  });

  it('on PGlite prints the keys on first start only; later starts keep the keys and the balance', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keygate-email-server-'));
    dirs.push(dir);
    const first = await start(['--data-dir', dir]);
    let secrets: string[];
    try {
      secrets = first.secrets;
      expect(secrets).toHaveLength(2);
      expect(first.output).toContain(`PGlite at ${dir}`);
      const live = first.lines.find(
        (line) => line.startsWith('curl ') && line.includes('mk_live_') && line.includes('/verify'),
      );
      expect((await runCurl(live as string)).status).toBe(200);
    } finally {
      await first.close();
    }

    const second = await start(['--data-dir', dir]);
    try {
      expect(second.secrets).toEqual([]);
      for (const secret of secrets) expect(second.output).not.toContain(secret);
      expect(second.output).toContain('already exist');
      expect(second.output).toContain('--new-keys');
      expect(second.output).toContain(`${DEMO_CREDITS - 1} credits`);
      for (const secret of secrets) {
        const res = await fetch(`${second.url}/v1/account`, { headers: { 'x-api-key': secret } });
        expect(res.status).toBe(200);
        expect((await res.json()).account.balance).toBe(DEMO_CREDITS - 1);
      }
    } finally {
      await second.close();
    }

    const third = await start(['--data-dir', dir, '--new-keys']);
    try {
      expect(third.secrets).toHaveLength(2);
      expect(third.secrets).not.toContain(secrets[0]);
    } finally {
      await third.close();
    }
  });

  it('a later start lists the existing keys one per line, newest first, at most 5, and the CLI line for all of them', async () => {
    const dir = await tempDir();
    const stores = await openStores({ dataDir: dir });
    // A clock that moves a second a call: keys made in the same millisecond would tie on createdAt,
    // and "newest first" would then have no order to follow.
    let tick = Date.now() - 60_000;
    const keys = new KeyManager({ store: stores.store, clock: () => (tick += 1000) });
    for (let i = 1; i <= 7; i++) {
      await keys.create({ accountId: DEMO_ACCOUNT, name: `worker ${i}`, mode: 'live', permissions: ['email:verify'] });
    }
    const hints = (await keys.list(DEMO_ACCOUNT)).map((k) => k.hint);
    await stores.close();

    const s = await start(['--data-dir', dir]);
    try {
      expect(s.secrets).toEqual([]);
      const at = s.lines.findIndex((line) => line.startsWith('7 active keys already exist'));
      expect(s.lines[at]).toMatch(/the newest 5:$/);
      expect(s.lines.slice(at + 1, at + 6)).toEqual([7, 6, 5, 4, 3].map((n) => `  ${hints[n - 1]}  worker ${n}`));
      const cli = ' (with the server stopped: it holds the PGlite folder)';
      expect(s.lines[at + 6]).toBe(
        `  all of them: node dist/cli.js keys list --store pglite:${dir} --account ${DEMO_ACCOUNT}${cli}`,
      );
      expect(s.output).toContain(`--name mine --mode live --permission email:verify${cli}`);
      // Never several keys on one line (seven keys once made one line of 1,734 characters).
      for (const line of s.lines) expect(line.match(/mk_(live|test)_…/g)?.length ?? 0).toBeLessThanOrEqual(1);
    } finally {
      await s.close();
    }
  });

  it.skipIf(!pgUp)('on PostgreSQL, the CLI lines for later starts do not ask to stop the server first', async () => {
    // A database of its own: the example keeps its tables in the public schema.
    const database = `keygate_example_w${RUN_ID}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(PG_URL);
    url.pathname = `/${database}`;
    try {
      await (await start([], { DATABASE_URL: url.href })).close();
      const later = await start([], { DATABASE_URL: url.href });
      try {
        expect(later.output).toContain('2 active keys already exist');
        expect(later.output).toContain('keys create --store "$DATABASE_URL"');
        expect(later.output).not.toContain('server stopped');
      } finally {
        await later.close();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  });

  it.each([
    [['--bogus'], 'ERR_PARSE_ARGS_UNKNOWN_OPTION'],
    [['--data-dir'], 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'],
  ])('refuses unknown arguments %j (%s)', async (argv, code) => {
    const started = main({ argv, env: { PORT: '0' }, log: () => {} });
    await expect(started).rejects.toThrow();
    await expect(started).rejects.toMatchObject({ name: 'TypeError', code });
  });

  it('refuses a PORT that is not a port', async () => {
    await expect(main({ argv: ['--memory'], env: { PORT: 'eighty' }, log: () => {} })).rejects.toMatchObject({
      code: 'invalid_setting',
      setting: 'PORT',
    });
  });

  // A PGlite folder holding a key that only 203.0.113.0/24 may use, made once (PGlite's first start is slow).
  let officeFolder: Promise<{ dir: string; secret: string }> | undefined;
  const withOfficeKey = () => {
    officeFolder ??= (async () => {
      const dir = await tempDir();
      const stores = await openStores({ dataDir: dir });
      const { secret } = await new KeyManager({ store: stores.store }).create({
        accountId: 'acct_office',
        name: 'office only',
        mode: 'test',
        allowedIps: ['203.0.113.0/24'],
      });
      await stores.close();
      return { dir, secret };
    })();
    return officeFolder;
  };

  it.each([
    ["the README's setting behind a proxy, from a client that connects directly", 403, null],
    ['a proxy on this machine (the test client plays it)', 200, { HOST: '127.0.0.1', TRUST_PROXY: 'loopback' }],
  ])('X-Forwarded-For with an allowed address, under %s, gets %i', async (_, status, setting) => {
    const env = setting ?? (await documentedProxySetting());
    expect(env.HOST).toBeDefined();
    const { dir, secret } = await withOfficeKey();
    const s = await start(['--data-dir', dir], { ...env, PORT: '0' });
    try {
      const res = await fetch(`${s.url}/v1/account`, {
        headers: { 'x-api-key': secret, 'x-forwarded-for': '203.0.113.7' },
      });
      expect(res.status).toBe(status);
      if (status === 403) expect(await res.json()).toMatchObject({ code: 'ip_not_allowed' });
    } finally {
      await s.close();
    }
  });

  it.each([
    ['0.0.0.0', '1'],
    ['0.0.0.0', 'true'],
    ['::', '2'],
    ['192.0.2.10', '1'],
    ['0.0.0.0', '0.0.0.0/0'],
    ['0.0.0.0', '10.0.0.2, ::/0'],
  ])('HOST=%s with TRUST_PROXY=%s (trusts whoever connects) refuses to start', async (HOST, TRUST_PROXY) => {
    const dir = join(await tempDir(), 'store');
    const started = main({ argv: ['--data-dir', dir], env: { PORT: '0', HOST, TRUST_PROXY }, log: () => {} });
    await expect(started).rejects.toMatchObject({ code: 'invalid_setting', setting: 'TRUST_PROXY' });
    expect(existsSync(dir)).toBe(false); // refused before any store opened
  });

  it.each([
    ['127.0.0.1', '1'],
    ['127.0.0.1', 'true'],
    ['0.0.0.0', 'loopback'],
    ['0.0.0.0', '10.0.0.2, 10.0.0.0/24'],
  ])('HOST=%s with TRUST_PROXY=%s starts', async (HOST, TRUST_PROXY) => {
    const s = await start(['--memory'], { HOST, TRUST_PROXY });
    await s.close();
  });

  it.each([['yes'], ['10.0.0.300'], ['10.0.0.0/33'], ['10.0.0.2:8080']])(
    'refuses TRUST_PROXY=%s (not an address, CIDR or named range)',
    async (TRUST_PROXY) => {
      const started = main({ argv: ['--memory'], env: { PORT: '0', TRUST_PROXY }, log: () => {} });
      await expect(started).rejects.toMatchObject({ code: 'invalid_setting', setting: 'TRUST_PROXY' });
    },
  );

  it.skipIf(process.platform === 'win32').each([
    ['a new folder', async () => join(await tempDir(), 'store')],
    [
      'a folder an earlier version left readable by everyone',
      async () => {
        const { dir } = await withOfficeKey();
        await chmod(dir, 0o755);
        for (const name of await readdir(dir, { recursive: true })) {
          const path = join(dir, name);
          await chmod(path, (await stat(path)).isDirectory() ? 0o755 : 0o666);
        }
        return dir;
      },
    ],
  ])('on %s, the PGlite folder is 0700 and every file in it 0600 after a start', async (_, prepare) => {
    const dir = await prepare();
    const s = await start(['--data-dir', dir]);
    try {
      expect(await looseModes(dir)).toEqual([]);
    } finally {
      await s.close();
    }
    expect(await looseModes(dir)).toEqual([]);
  });
});
