import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, serviceAvailable } from '../stores/support/services.js';

// The CLI as a user runs it: the built `keygate` binary in a child process.
const BIN = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-'));

beforeAll(() => {
  if (!existsSync(BIN)) execFileSync('npx', ['tsup', '--silent'], { cwd: join(import.meta.dirname, '../..') });
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function keygate(store: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, KEYGATE_STORE: store }, cwd: dir, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const json = (run: Run) => JSON.parse(run.stdout);

const pg = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const stores: Array<[string, string | undefined]> = [
  ['PGlite folder', `pglite:${join(dir, 'db')}`],
  ['PostgreSQL server', pg ? PG_URL : undefined],
];

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
  );

  it.skipIf(!store)('keys list and show never print a secret', async () => {
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
  });

  it.skipIf(!store)('keys update changes fields; bad input exits 1 with one line and changes nothing', async () => {
    const updated = await run('keys', 'update', id, '--name', 'renamed', '--clear-allow', '--json');
    expect(updated.code).toBe(0);
    expect(json(updated)).toMatchObject({ name: 'renamed', allowedIps: [], version: 2 });

    for (const args of [
      ['keys', 'update', id, '--allow', '10/8'],
      ['keys', 'update', id, '--allow', '::1/129'],
      ['keys', 'update', id],
      ['keys', 'create', '--account', account, '--name', 'x', '--mode', 'prod'],
      ['keys', 'create', '--account', account, '--name', 'x', '--mode', 'test', '--allow', 'hello'],
      ['keys', 'create', '--account', account, '--mode', 'test'],
      ['keys', 'show', 'key_doesnotexist'],
      ['keys', 'update', 'key_doesnotexist', '--name', 'x'],
      ['keys', 'frobnicate'],
      ['keys', 'list', '--account', account, '--bogus'],
    ]) {
      const bad = await run(...args);
      expect({ args, code: bad.code }).toEqual({ args, code: 1 });
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toMatch(/^keygate: /);
    }
    const after = json(await run('keys', 'show', id, '--json'));
    expect(after).toMatchObject({ name: 'renamed', allowedIps: [], version: 2 });
    expect(json(await run('keys', 'list', '--account', account, '--json'))).toHaveLength(2);
  });

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
  );

  it.skipIf(!store)(
    'keys revoke asks for confirmation unless --yes; revoking twice and updating a revoked key exit 1',
    async () => {
      const unconfirmed = await run('keys', 'revoke', id);
      expect(unconfirmed.code).toBe(1);
      expect(unconfirmed.stderr).toContain('--yes');
      expect(json(await run('keys', 'show', id, '--json')).status).toBe('active');

      const revoked = await run('keys', 'revoke', id, '--yes', '--json');
      expect(revoked.code).toBe(0);
      expect(json(revoked)).toMatchObject({ id, status: 'revoked' });

      const twice = await run('keys', 'revoke', id, '--yes');
      expect(twice.code).toBe(1);
      expect(twice.stderr).toContain('revoked');
      const change = await run('keys', 'update', id, '--name', 'again');
      expect(change.code).toBe(1);
      expect(json(await run('keys', 'show', id, '--json'))).toMatchObject({ status: 'revoked', name: 'renamed' });
    },
  );

  it.skipIf(!store)('usage prints the per-day report', async () => {
    const usage = await run('usage', id, '--json');
    expect(usage.code).toBe(0);
    expect(json(usage)).toMatchObject({ keyId: id, allowed: 0, denied: 0, lastUsedAt: null });
    const bad = await run('usage', id, '--from', 'yesterday');
    expect(bad.code).toBe(1);
  });
});

describe('keygate CLI without a store', () => {
  it('--help prints usage and exits 0; no command exits 1', async () => {
    const help = await keygate('pglite:unused', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('keygate keys create');
    expect((await keygate('pglite:unused')).code).toBe(1);
  });

  it('an unknown store URL is a one-line error', async () => {
    const run = await keygate('mysql://localhost', 'keys', 'list', '--account', 'a');
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      'keygate: unknown store "mysql://localhost"; use pglite:<dir>, postgres://… or redis://…',
    );
  });
});
