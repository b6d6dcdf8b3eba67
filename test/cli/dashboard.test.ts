// `keygate dashboard link`: a sign-in link from the dashboard secret alone (KEYGATE_DASHBOARD_SECRET,
// or <dir>/dashboard-secret of a pglite: store), without opening the store.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyManager, MemoryKeyStore } from 'keygate';
import { dashboard } from 'keygate/dashboard';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startService } from '../support/service-process.js';
import { BIN, ensureBuilt, type Run } from './support/keygate.js';

const root = mkdtempSync(join(tmpdir(), 'keygate-cli-dashboard-'));
const SECRET = 'cli-dashboard-secret-of-at-least-32-bytes';
const services: ServiceProcess[] = [];

beforeAll(ensureBuilt, 120_000);
afterAll(async () => {
  for (const service of services) await service.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Runs `keygate ...args` in folder `CWD` (default: the test's), with exactly `env` for the dashboard variables. */
function keygate({ CWD, ...env }: Record<string, string>, ...args: string[]): Promise<Run> {
  const base = { ...process.env };
  delete base.KEYGATE_DASHBOARD_SECRET;
  delete base.KEYGATE_STORE;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...base, ...env }, cwd: CWD ?? root, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const link = (env: Record<string, string>, ...args: string[]) =>
  keygate(env, 'dashboard', 'link', '--account', 'acct_cli', '--base-url', 'http://dash.test', ...args);

/** A dashboard at /dashboard over a MemoryKeyStore with one key of acct_cli, signed with `secret`. */
async function dashboardWith(secret: string) {
  const keys = new KeyManager({ store: new MemoryKeyStore() });
  await keys.create({ accountId: 'acct_cli', name: 'cli made this', mode: 'test' });
  return dashboard({ manager: keys, secret, basePath: '/dashboard' });
}

/** Opens `url` in `ui`: the sign-in status, and the list page the session cookie then shows. */
async function follow(ui: { fetch(request: Request): Promise<Response> }, url: string) {
  const signIn = await ui.fetch(new Request(url));
  const cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const list = await ui.fetch(new Request('http://dash.test/dashboard/', { headers: { cookie } }));
  return { status: signIn.status, location: signIn.headers.get('location'), list: await list.text() };
}

/** A folder holding only a dashboard secret file: no database at all. */
function folderWithSecret(name: string, secret = SECRET): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'dashboard-secret'), `${secret}\n`, { mode: 0o600 });
  return dir;
}

describe('keygate dashboard link', () => {
  it('prints a link, --json { "url" }, that signs in to a dashboard built with the same secret (303 + cookie)', async () => {
    const text = await link({ KEYGATE_DASHBOARD_SECRET: SECRET });
    expect(text.code).toBe(0);
    expect(text.stdout.trim()).toMatch(/^http:\/\/dash\.test\/dashboard\/sign-in\?token=[\w.-]+$/);
    const json = await link({ KEYGATE_DASHBOARD_SECRET: SECRET }, '--json');
    expect(json.code).toBe(0);
    const { url } = JSON.parse(json.stdout);
    expect(Object.keys(JSON.parse(json.stdout))).toEqual(['url']);

    const opened = await follow(await dashboardWith(SECRET), url);
    expect(opened).toMatchObject({ status: 303, location: '/dashboard/' });
    expect(opened.list).toContain('cli made this');
    // Another secret does not accept it.
    expect((await follow(await dashboardWith(`${SECRET}-other`), url)).status).toBe(401);
  });

  it('takes --base-path and refuses a base URL with a path, naming the flag', async () => {
    const at = await link({ KEYGATE_DASHBOARD_SECRET: SECRET }, '--base-path', '/admin/keys', '--json');
    expect(JSON.parse(at.stdout).url).toMatch(/^http:\/\/dash\.test\/admin\/keys\/sign-in\?token=/);
    const refused = await keygate(
      { KEYGATE_DASHBOARD_SECRET: SECRET },
      ...['dashboard', 'link', '--account', 'a', '--base-url', 'http://dash.test/admin', '--json'],
    );
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error).toMatchObject({ code: 'invalid_input', field: '--base-url' });
  });

  it.each([
    ['--store pglite:DIR', (dir: string) => [{}, ['--store', `pglite:${dir}`]] as const],
    ['KEYGATE_STORE=pglite:DIR', (dir: string) => [{ KEYGATE_STORE: `pglite:${dir}` }, []] as const],
    ['the default folder ./.keygate', (dir: string) => [{ CWD: join(dir, '..') }, []] as const],
  ])('reads DIR/dashboard-secret with %s, and never opens the database', async (_, where) => {
    const dir = folderWithSecret(`secret-${Math.random().toString(36).slice(2)}/.keygate`);
    const [env, args] = where(dir);
    const run = await link(env, ...args, '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect((await follow(await dashboardWith(SECRET), JSON.parse(run.stdout).url)).status).toBe(303);
    // Nothing but the secret in the folder: no database files, no lock.
    expect(readdirSync(dir)).toEqual(['dashboard-secret']);
  });

  it('KEYGATE_DASHBOARD_SECRET wins over the folder', async () => {
    const dir = folderWithSecret('both', `${SECRET}-in-the-file`);
    const run = await link({ KEYGATE_DASHBOARD_SECRET: SECRET }, '--store', `pglite:${dir}`, '--json');
    expect((await follow(await dashboardWith(SECRET), JSON.parse(run.stdout).url)).status).toBe(303);
  });

  it.each([
    ['a pglite folder without the file', () => ['--store', `pglite:${join(root, 'empty')}`], /does not exist/],
    ['a PostgreSQL store', () => ['--store', 'postgres://nobody@127.0.0.1:1/none'], /KEYGATE_DASHBOARD_SECRET/],
    ['a Redis store', () => ['--store', 'redis://127.0.0.1:1'], /KEYGATE_DASHBOARD_SECRET/],
  ])('without a secret (%s) exits 1 (invalid_input, field secret) and prints no link', async (_, args, why) => {
    const human = await link({}, ...args());
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/^keygate: no dashboard secret: /);
    expect(human.stderr).toMatch(why);
    const json = await link({}, ...args(), '--json');
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'invalid_input', field: 'secret' });
    expect(existsSync(join(root, 'empty'))).toBe(false); // nothing created either
  });

  it('refuses a secret shorter than 32 bytes: exit 1, field secret', async () => {
    const run = await link({ KEYGATE_DASHBOARD_SECRET: 'short' }, '--json');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({ code: 'invalid_input', field: 'secret' });
  });

  it('refuses an account id with a control character: exit 1 (invalid_input, field --account), no link', async () => {
    // The account check comes from the core's sources, bundled into the CLI: its error must still be
    // the root's InvalidInputError, or the exit code would be that of an unknown failure.
    const run = await keygate({ KEYGATE_DASHBOARD_SECRET: SECRET }, 'dashboard', 'link', '--account', 'a\tb', '--json');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(JSON.parse(run.stderr).error).toMatchObject({ code: 'invalid_input', field: '--account' });
  });

  it('--help shows the command and its flags', async () => {
    const help = await keygate({}, '--help');
    expect(help.stdout).toContain('keygate dashboard link --account A [--base-url URL] [--base-path PATH]');
    const own = await keygate({}, 'dashboard', 'link', '--help');
    expect(own.stdout).toMatch(/dashboard-secret/);
  });

  it('works while the example service holds the PGlite folder: the link opens its demo account', async () => {
    const dir = join(root, 'held');
    const service = await startService(dir);
    services.push(service);
    const secretFile = join(dir, 'dashboard-secret');
    expect(readFileSync(secretFile, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);

    const run = await keygate(
      {},
      ...['dashboard', 'link', '--account', 'acct_demo', '--store', `pglite:${dir}`, '--base-url', service.url],
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const signIn = await fetch(run.stdout.trim(), { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    expect(cookie).toMatch(/^keygate_session=/);
    const list = await fetch(`${service.url}/dashboard/`, { headers: { cookie } });
    expect(list.status).toBe(200);
    const html = await list.text();
    expect(html).toContain('demo live');
    expect(html).toContain('demo test');

    // The folder is still the service's: a command that opens the store is refused.
    const locked = await keygate({}, 'keys', 'list', '--account', 'acct_demo', '--store', `pglite:${dir}`, '--json');
    expect(JSON.parse(locked.stderr).error).toMatchObject({ code: 'store_locked' });
  }, 180_000);
});
