import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_MEANINGS } from '../../cli/errors.js';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { ensureBuilt, type Run, keygate as runKeygate } from './support/keygate.js';

// The CLI as a user runs it: the built `keygate` binary in a child process.
const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-'));

beforeAll(ensureBuilt, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const keygate = (store: string, ...args: string[]) => runKeygate({ store, cwd: dir }, ...args);

const json = (run: Run) => JSON.parse(run.stdout);

const pgUp = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
// A schema of this run's own (the URL's `schema` parameter), dropped afterwards: nothing lands in public.
const SCHEMA = `keygate_cli_${RUN_ID}`;
const pgStore = new URL(PG_URL);
pgStore.searchParams.set('schema', SCHEMA);
const stores: Array<[string, string | undefined]> = [
  ['PGlite folder', `pglite:${join(dir, 'db')}`],
  ['PostgreSQL server', pgUp ? pgStore.toString() : undefined],
];
afterAll(async () => {
  if (!pgUp) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
});

describe.each(stores)('keygate CLI on %s', (_, store) => {
  const run = (...args: string[]) => keygate(store as string, ...args);
  const account = `acct_cli_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  let id = '';
  let secret = '';

  it.skipIf(!store)(
    'keys create prints the secret once, clearly marked, and --json gives { secret, key }',
    async () => {
      const human = await run('keys', 'create', '--account', account, '--name', 'human', '--mode', 'test');
      expect(human.code).toBe(0);
      expect(human.stdout).toContain('SECRET (shown once');
      expect(human.stdout).toMatch(/^mk_test_[0-9A-Za-z]{38}$/m);

      const created = await run(
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
        '--permission',
        'email:score',
        '--allow',
        '203.0.113.0/24',
        '--allow',
        '2001:DB8::/32',
        '--json',
      );
      expect(created.code).toBe(0);
      const body = json(created);
      expect(Object.keys(body).sort()).toEqual(['key', 'secret']);
      expect(body.key).toMatchObject({
        accountId: account,
        name: 'ci',
        mode: 'live',
        permissions: ['email:verify', 'email:score'],
        allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
      });
      id = body.key.id;
      secret = body.secret;
      expect(secret).toMatch(/^mk_live_/);
    },
    180_000,
  );

  it.skipIf(!store)(
    'keys list and show never print a secret',
    async () => {
      const list = await run('keys', 'list', '--account', account, '--json');
      expect(list.code).toBe(0);
      expect(json(list).map((k: { name: string }) => k.name)).toEqual(['human', 'ci']);
      const show = await run('keys', 'show', id);
      expect(show.code).toBe(0);
      expect(show.stdout).toContain('203.0.113.0/24');
      for (const out of [list.stdout, show.stdout]) {
        expect(out).not.toContain(secret);
        expect(out).not.toMatch(/mk_(live|test)_[0-9A-Za-z]{38}/);
      }
    },
    120_000,
  );

  it.skipIf(!store)(
    'keys update changes fields; a refused command exits with its code, one line, and changes nothing',
    async () => {
      const updated = await run('keys', 'update', id, '--name', 'renamed', '--clear-allow', '--json');
      expect(updated.code).toBe(0);
      expect(json(updated)).toMatchObject({ name: 'renamed', allowedIps: [], version: 2 });

      const refused: Array<[string[], number, string, string | undefined]> = [
        [['keys', 'update', id, '--allow', '10/8'], 1, 'invalid_input', 'allowedIps[0]'],
        [['keys', 'update', id, '--allow', '::1/129'], 1, 'invalid_input', 'allowedIps[0]'],
        [['keys', 'update', id], 1, 'invalid_input', 'arguments'],
        [['keys', 'update', id, '--allow', '10.0.0.0/8', '--clear-allow'], 1, 'invalid_input', '--clear-allow'],
        [['keys', 'create', '--account', account, '--name', 'x', '--mode', 'prod'], 1, 'invalid_input', 'mode'],
        [
          ['keys', 'create', '--account', account, '--name', 'x', '--mode', 'test', '--allow', 'hello'],
          1,
          'invalid_input',
          'allowedIps[0]',
        ],
        [['keys', 'create', '--account', account, '--mode', 'test'], 1, 'invalid_input', '--name'],
        [['keys', 'show', 'key_doesnotexist'], 2, 'key_not_found', 'id'],
        [['keys', 'update', 'key_doesnotexist', '--name', 'x'], 2, 'key_not_found', 'id'],
        [['keys', 'frobnicate'], 1, 'invalid_input', 'command'],
        [['keys', 'list', '--account', account, '--bogus'], 1, 'invalid_input', '--bogus'],
        [['keys', 'show', id, '--account', account], 1, 'invalid_input', '--account'],
      ];
      for (const [args, exit, code, field] of refused) {
        const refusal = await run(...args, '--json');
        expect({ args, exit: refusal.code }).toEqual({ args, exit });
        expect(refusal.stdout).toBe('');
        expect(JSON.parse(refusal.stderr)).toEqual({
          error: expect.objectContaining({ code, message: expect.any(String), ...(field ? { field } : {}) }),
        });
      }
      // Without --json: one line, `keygate: <message>`, the same exit code.
      for (const [args, exit] of [0, 7, 9].map((i) => refused[i] as (typeof refused)[number])) {
        const human = await run(...args);
        expect({ args, exit: human.code }).toEqual({ args, exit });
        expect(human.stderr).toMatch(/^keygate: [^\n]+\n$/);
      }
      // A key id (key_ and 20 key characters) is printed whole: only key-shaped text is cut.
      const unknownId = 'key_0123456789ABCDEFghij';
      const missing = await run('keys', 'show', unknownId, '--json');
      expect(JSON.parse(missing.stderr).error).toMatchObject({
        code: 'key_not_found',
        keyId: unknownId,
        message: expect.stringContaining(unknownId),
      });
      expect((await run('keys', 'show', unknownId)).stderr).toContain(unknownId);
      const after = json(await run('keys', 'show', id, '--json'));
      expect(after).toMatchObject({ name: 'renamed', allowedIps: [], version: 2 });
      expect(json(await run('keys', 'list', '--account', account, '--json'))).toHaveLength(2);
    },
    180_000,
  );

  it.skipIf(!store)(
    'keys rotate gives a new secret with the same permissions; rotation-status reports the step',
    async () => {
      const rotated = await run('keys', 'rotate', id, '--json');
      expect(rotated.code).toBe(0);
      const body = json(rotated);
      expect(body.secret).not.toBe(secret);
      expect(body.key).toMatchObject({ permissions: ['email:verify', 'email:score'], rotatedFrom: id, mode: 'live' });
      const status = await run('keys', 'rotation-status', id, '--json');
      expect(status.code).toBe(0);
      expect(json(status)).toMatchObject({ oldKeyId: id, newKeyId: body.key.id, step: 'created', safeToRevoke: false });
      const human = await run('keys', 'rotation-status', id);
      expect(human.stdout).toContain('deploy the new key');
    },
    180_000,
  );

  it.skipIf(!store)(
    'keys revoke asks for confirmation unless --yes; revoking twice and updating a revoked key exit 3 (key_revoked)',
    async () => {
      const unconfirmed = await run('keys', 'revoke', id, '--json');
      expect(unconfirmed.code).toBe(1);
      expect(JSON.parse(unconfirmed.stderr).error).toMatchObject({ code: 'invalid_input', field: '--yes' });
      expect(json(await run('keys', 'show', id, '--json')).status).toBe('active');

      const revoked = await run('keys', 'revoke', id, '--yes', '--quiet-for', '0s', '--json');
      expect(revoked.code).toBe(0);
      expect(json(revoked)).toMatchObject({ id, status: 'revoked' });

      const twice = await run('keys', 'revoke', id, '--yes', '--json');
      expect(twice.code).toBe(3);
      expect(JSON.parse(twice.stderr).error).toMatchObject({ code: 'key_revoked', keyId: id, state: 'revoked' });
      const change = await run('keys', 'update', id, '--name', 'again');
      expect(change.code).toBe(3);
      expect(json(await run('keys', 'show', id, '--json'))).toMatchObject({ status: 'revoked', name: 'renamed' });
    },
    180_000,
  );

  it.skipIf(!store)(
    'usage prints the per-day report',
    async () => {
      const usage = await run('usage', id, '--json');
      expect(usage.code).toBe(0);
      expect(json(usage)).toMatchObject({ keyId: id, allowed: 0, denied: 0, lastUsedAt: null });
      const bad = await run('usage', id, '--from', 'yesterday', '--json');
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stderr).error).toMatchObject({ code: 'invalid_input', field: 'from' });
    },
    120_000,
  );
});

describe.skipIf(!pgUp)('keygate CLI on PostgreSQL with ?schema=NAME', () => {
  const tablesIn = async (schema: string) => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE 'keygate%'`,
        [schema],
      );
      return rows.map((row) => row.table_name);
    } finally {
      await admin.end();
    }
  };

  it('keeps its tables in that schema, and the driver never sees the parameter', async () => {
    const own = `${SCHEMA}_own`;
    const url = new URL(PG_URL);
    url.searchParams.set('schema', own);
    try {
      const created = await keygate(
        url.toString(),
        'keys',
        'create',
        '--account',
        'acct_s',
        '--name',
        'n',
        '--mode',
        'test',
      );
      expect(created.code).toBe(0);
      expect(await tablesIn(own)).toContain('keygate_keys');
    } finally {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${own}" CASCADE`);
      await admin.end();
    }
  });

  it('refuses a schema name that is not a lower-case identifier, naming schema, and creates nothing', async () => {
    const url = new URL(PG_URL);
    url.searchParams.set('schema', 'Not-A-Schema');
    const run = await keygate(url.toString(), 'keys', 'list', '--account', 'a', '--json');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({ code: 'invalid_input', field: 'schema' });
    expect(await tablesIn('Not-A-Schema')).toEqual([]);
  });
});

describe('keygate CLI without a store', () => {
  it('--help prints every command and the exit codes, and exits 0; no command exits 1', async () => {
    const help = await keygate('pglite:unused', '--help');
    expect(help.code).toBe(0);
    for (const line of [
      'keygate keys create --account A --name N --mode test|live [--permission P]... [--allow CIDR]... [--expires ISO]',
      'keygate keys list --account A [--unused-for DURATION]',
      'keygate keys show ID',
      'keygate keys update ID [--name N] [--permission P]... [--allow CIDR]... [--clear-allow] [--expires ISO|never]',
      'keygate keys rotate ID [--grace DURATION]',
      'keygate keys rotation-status ID [--quiet-for DURATION]',
      'keygate keys suspend ID [--reason R]',
      'keygate keys resume ID',
      'keygate keys revoke ID [--yes] [--quiet-for DURATION]',
      'keygate usage ID [--from YYYY-MM-DD] [--to YYYY-MM-DD]',
      '1  invalid_input, unsupported, store_locked',
      '2  key_not_found',
      '3  key_revoked, key_conflict, key_in_use',
      '4  key_store_unavailable, rate_limiter_unavailable, credit_ledger_unavailable',
    ]) {
      expect(help.stdout).toContain(line);
    }
    const revoke = await keygate('pglite:unused', 'keys', 'revoke', '--help');
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toMatch(/-y, --yes +do not ask/);
    expect(revoke.stdout).toMatch(/--quiet-for DURATION +revoke only if/);
    expect(existsSync(join(dir, 'unused'))).toBe(false);
    const none = await keygate('pglite:unused', '--json');
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stderr).error).toMatchObject({ code: 'invalid_input', field: 'command' });
  });

  it("the docs' exit-code table says what --help says", async () => {
    const help = (await keygate('pglite:unused', '--help')).stdout;
    const readme = readFileSync(join(import.meta.dirname, '../../docs/guide/cli.md'), 'utf8');
    const lines = help.split('Exit codes:\n')[1]?.split('\n\n')[0]?.split('\n') ?? [];
    expect(lines).toHaveLength(Object.keys(EXIT_MEANINGS).length);
    for (const line of lines) {
      const [, exit, codes] = /^ {2}(\d) {2}(?:([a-z_, ]+): )?/.exec(line) ?? [];
      const listed = (codes ?? '')
        .split(', ')
        .filter(Boolean)
        .map((code) => `\`${code}\``)
        .join(', ');
      expect(readme).toMatch(new RegExp(`\\| ${exit} +\\| ${listed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +\\|`));
    }
  });

  it.each([['redis://127.0.0.1:1'], ['postgres://postgres@127.0.0.1:1/test']])(
    'a store that cannot be reached (%s) exits 4 with key_store_unavailable',
    async (store) => {
      const run = await keygate(store, 'keys', 'list', '--account', 'a', '--json');
      expect(run.code).toBe(4);
      expect(JSON.parse(run.stderr).error).toMatchObject({ code: 'key_store_unavailable' });
    },
  );

  it("a driver's message is printed with a bare random part (a key pasted without its prefix) cut out", async () => {
    // 32 key characters on their own, as a key's random part: here inside a path the driver echoes.
    const random = 'Kvfgyjh7bkeib5scxyyogeywpgharyQ2';
    writeFileSync(join(dir, 'plain-file'), '');
    const store = `pglite:${join(dir, 'plain-file', random)}`;
    const asJson = await keygate(store, 'keys', 'list', '--account', 'a', '--json');
    expect(asJson.code).toBe(4);
    const error = JSON.parse(asJson.stderr).error;
    expect(error).toMatchObject({ code: 'key_store_unavailable', message: expect.stringContaining('plain-file/…') });
    expect(asJson.stderr).not.toContain(random);
    const human = await keygate(store, 'keys', 'list', '--account', 'a');
    expect(human.code).toBe(4);
    expect(human.stderr).toMatch(/^keygate: could not open the store pglite:[^\n]*plain-file\/…[^\n]*\n$/);
    expect(human.stderr).not.toContain(random);
  });

  it('an unknown store URL is a one-line error', async () => {
    const run = await keygate('mongodb://localhost', 'keys', 'list', '--account', 'a');
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      'keygate: unknown store mongodb://localhost (scheme mongodb:). The CLI opens pglite:<dir>, sqlite:<file>, ' +
        'postgres://…, mysql://… (or mariadb://…) or redis://…',
    );
  });
});
