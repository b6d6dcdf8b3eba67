// The CLI on the SQL backends beside PostgreSQL: a MariaDB (or MySQL) server through mysql:// and
// mariadb://, and a SQLite file through sqlite:. Keys, usage, audit, credits and webhooks, in-process.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { loadDriver } from '../../cli/open-store.js';
import { mysqlAvailable, openTestDatabase, type TestDatabase } from '../stores/support/mysql.js';
import { RUN_ID } from '../stores/support/services.js';

const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-sql-'));
const mysqlUp = await mysqlAvailable();
// A database of this run's own, and a table prefix of the CLI's, so nothing meets another test's tables.
const PREFIX = `kgcli${RUN_ID}_`.toLowerCase();
let db: TestDatabase | undefined;
let mariadbUrl = '';

beforeAll(async () => {
  if (!mysqlUp) return;
  db = await openTestDatabase('cli');
  const url = new URL(db.url);
  url.protocol = 'mariadb:';
  url.searchParams.set('prefix', PREFIX);
  mariadbUrl = url.toString();
}, 60_000);
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(store: string, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--store', store], {
    env: {},
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

const STORES = [
  { name: 'MariaDB (mariadb://…?prefix=)', url: () => mariadbUrl, up: mysqlUp },
  { name: 'a SQLite file (sqlite:<absolute path>)', url: () => `sqlite:${join(dir, 'keys.db')}`, up: true },
  {
    name: 'a SQLite file (sqlite:///…)',
    url: () => `sqlite://${join(dir, 'url form.db').replaceAll(' ', '%20')}`,
    up: true,
  },
];

describe.each(STORES)('the CLI on $name', ({ url, up }) => {
  const account = `acct_sql_${RUN_ID}`;

  it.skipIf(!up)(
    'creates a key, lists it, revokes it, and the audit log records each step',
    async () => {
      const created = await cli(url(), [
        'keys',
        'create',
        '--account',
        account,
        '--name',
        'ci',
        '--mode',
        'live',
        '--permission',
        'email:verify',
        '--allow',
        '203.0.113.0/24',
        '--json',
      ]);
      expect(created.code).toBe(0);
      const { secret, key } = created.json();
      expect(secret).toMatch(/^mk_live_/);
      expect(key).toMatchObject({ accountId: account, name: 'ci', allowedIps: ['203.0.113.0/24'] });

      const listed = await cli(url(), ['keys', 'list', '--account', account, '--json']);
      expect(listed.json().map((k: { id: string; status: string }) => [k.id, k.status])).toEqual([[key.id, 'active']]);

      const revoked = await cli(url(), ['keys', 'revoke', key.id, '--yes', '--json']);
      expect(revoked.code).toBe(0);
      expect(revoked.json()).toMatchObject({ id: key.id, status: 'revoked' });
      const again = await cli(url(), ['keys', 'show', key.id, '--json']);
      expect(again.json()).toMatchObject({ status: 'revoked' });
      expect((await cli(url(), ['keys', 'update', key.id, '--name', 'x'])).code).toBe(3);

      const usage = await cli(url(), ['usage', key.id, '--json']);
      expect(usage.code).toBe(0);
      const audit = await cli(url(), ['audit', '--account', account, '--json']);
      expect(audit.json().map((e: { action: string }) => e.action)).toEqual(['key.revoked', 'key.created']);
    },
    60_000,
  );

  it.skipIf(!up)(
    'tops up credits once per reference, lists the entries and reconciles',
    async () => {
      const credits = `acct_sqlcr_${RUN_ID}`;
      const first = await cli(url(), [
        'credits',
        'top-up',
        '--account',
        credits,
        '--amount',
        '500',
        '--reference',
        'pay_1',
        '--json',
      ]);
      expect(first.json()).toMatchObject({ applied: true, balance: 500 });
      const twice = await cli(url(), [
        'credits',
        'top-up',
        '--account',
        credits,
        '--amount',
        '500',
        '--reference',
        'pay_1',
        '--json',
      ]);
      expect(twice.json()).toMatchObject({ applied: false, balance: 500 });
      expect((await cli(url(), ['credits', 'show', '--account', credits, '--json'])).json()).toMatchObject({
        balance: 500,
      });
      const entries = (await cli(url(), ['credits', 'entries', '--account', credits, '--json'])).json();
      expect(entries).toMatchObject([{ kind: 'top_up', amount: 500, balance: 500, reference: 'pay_1' }]);
      const reconciled = await cli(url(), ['credits', 'reconcile', '--account', credits, '--json']);
      expect(reconciled.code).toBe(0);
      expect(reconciled.json()).toMatchObject({ ok: true });
      const audit = await cli(url(), ['audit', '--account', credits, '--json']);
      expect(audit.json().map((e: { action: string }) => e.action)).toEqual(['credits.topped_up']);
    },
    60_000,
  );

  it.skipIf(!up)(
    "adds a webhook endpoint, logs the account's key events for it, and removes it",
    async () => {
      const hooks = `acct_sqlwh_${RUN_ID}`;
      const added = await cli(url(), [
        'webhooks',
        'add',
        '--account',
        hooks,
        '--url',
        'https://hooks.example.com/k',
        '--json',
      ]);
      expect(added.code).toBe(0);
      const endpoint = added.json().endpoint ?? added.json();
      await cli(url(), ['keys', 'create', '--account', hooks, '--name', 'w', '--mode', 'test']);
      const log = (await cli(url(), ['webhooks', 'deliveries', '--account', hooks, '--json'])).json();
      expect(log.map((d: { eventType: string }) => d.eventType)).toEqual(['key.created']);
      expect((await cli(url(), ['webhooks', 'remove', endpoint.id, '--account', hooks])).code).toBe(0);
      expect((await cli(url(), ['webhooks', 'list', '--account', hooks])).stdout.trim()).toBe('no endpoints');
    },
    60_000,
  );
});

describe.skipIf(!mysqlUp)('mysql:// with a table prefix', () => {
  it('keeps every table under the prefix in the URL database', async () => {
    const url = new URL(mariadbUrl);
    url.protocol = 'mysql:';
    const account = `acct_sqlpfx_${RUN_ID}`;
    expect(
      (await cli(url.toString(), ['keys', 'create', '--account', account, '--name', 'p', '--mode', 'test'])).code,
    ).toBe(0);
    expect((await cli(url.toString(), ['credits', 'show', '--account', account])).code).toBe(0);
    const conn = await mysql.createConnection({ uri: db?.url as string });
    try {
      const [rows] = await conn.query(
        'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE()',
      );
      const names = (rows as Array<{ t: string }>).map((r) => r.t);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((n) => !n.startsWith(PREFIX))).toEqual([]);
      expect(names).toContain(`${PREFIX}keys`);
      expect(names).toContain(`${PREFIX}credit_entries`);
    } finally {
      await conn.end();
    }
  }, 60_000);

  it('a bad prefix is refused naming tablePrefix, and nothing is created', async () => {
    const url = new URL(mariadbUrl);
    url.searchParams.set('prefix', 'Bad-Prefix');
    const run = await cli(url.toString(), ['keys', 'list', '--account', 'a', '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({ code: 'invalid_input', field: 'tablePrefix' });
    const conn = await mysql.createConnection({ uri: db?.url as string });
    try {
      const [rows] = await conn.query(
        "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'bad%'",
      );
      expect(Number((rows as Array<{ n: number }>)[0]?.n)).toBe(0);
    } finally {
      await conn.end();
    }
  });
});

describe('sqlite: file names', () => {
  it('a relative sqlite:<path> is relative to the working folder', async () => {
    const file = join(dir, 'relative.db');
    const run = await cli(`sqlite:${relative(process.cwd(), file)}`, ['keys', 'list', '--account', 'a']);
    expect(run.code).toBe(0);
    expect(existsSync(file)).toBe(true);
  });

  it.each([
    ['sqlite:', 'needs a file'],
    ['sqlite::memory:', 'in-memory'],
    ['sqlite://host/keys.db', 'no host'],
    ['sqlite:///tmp/keys.db?mode=ro', 'no host and no parameters'],
  ])('%s is refused before anything opens (exit 1, field store)', async (store, says) => {
    const run = await cli(store, ['keys', 'list', '--account', 'a', '--json']);
    expect(run.code).toBe(1);
    const { error } = JSON.parse(run.stderr);
    expect(error).toMatchObject({ code: 'invalid_input', field: 'store' });
    expect(error.message).toContain(says);
  });
});

describe('a driver that is not installed', () => {
  it('is one line naming the package to install (unsupported, field store)', async () => {
    const missing = loadDriver('keygate-no-such-driver', 'x://', () => import('keygate-no-such-driver' as string));
    await expect(missing).rejects.toMatchObject({
      code: 'unsupported',
      field: 'store',
      message: 'x:// stores need the keygate-no-such-driver package: npm install keygate-no-such-driver',
    });
  });
});
