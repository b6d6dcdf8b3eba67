import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, type Run, keygate as runKeygate } from './support/keygate.js';

// Suspend, resume and rotate --grace as a user runs them: the built binary over a PGlite folder.
const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-life-'));
beforeAll(ensureBuilt, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args: string[]) => runKeygate({ store: `pglite:${join(dir, 'db')}`, cwd: dir }, ...args);
const json = (r: Run) => JSON.parse(r.stdout);

async function create(name: string): Promise<string> {
  const created = await run('keys', 'create', '--account', 'acct_life', '--name', name, '--mode', 'test', '--json');
  expect(created.code).toBe(0);
  return json(created).key.id as string;
}

describe('keygate keys suspend, resume and rotate --grace', () => {
  it('suspend --reason shows the status and reason; show and list show them; resume ends it', async () => {
    const id = await create('paused');
    const suspended = await run('keys', 'suspend', id, '--reason', 'invoice unpaid');
    expect(suspended.code).toBe(0);
    expect(suspended.stdout).toMatch(/status +suspended/);
    expect(suspended.stdout).toMatch(/reason +invoice unpaid/);

    const shown = json(await run('keys', 'show', id, '--json'));
    expect(shown).toMatchObject({ status: 'suspended', suspendedReason: 'invoice unpaid' });
    expect(typeof shown.suspendedAt).toBe('string');
    const table = await run('keys', 'list', '--account', 'acct_life', '--format', 'table');
    expect(table.stdout.split('\n').find((line) => line.startsWith(id))).toMatch(/ suspended /);

    const resumed = await run('keys', 'resume', id, '--json');
    expect(resumed.code).toBe(0);
    expect(json(resumed)).toMatchObject({ status: 'active', suspendedAt: null, suspendedReason: null });
  });

  it('refuses a bad reason with exit 1 naming reason; a revoked key with exit 3', async () => {
    const id = await create('strict');
    const bad = await run('keys', 'suspend', id, '--reason', 'a\u0007b', '--json');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr).error).toMatchObject({ code: 'invalid_input', field: 'reason' });
    expect(json(await run('keys', 'show', id, '--json')).status).toBe('active');
    expect((await run('keys', 'revoke', id, '--yes')).code).toBe(0);
    const revoked = await run('keys', 'resume', id, '--json');
    expect(revoked.code).toBe(3);
    expect(JSON.parse(revoked.stderr).error).toMatchObject({ code: 'key_revoked' });
  });

  it('rotate --grace 24h sets the old key to expire in 24 hours; --grace 0 at once', async () => {
    const a = await create('graceful');
    const before = Date.now();
    const rotated = await run('keys', 'rotate', a, '--grace', '24h');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toContain(`The old key ${a} stops working in 1d.`);
    const expires = Date.parse(json(await run('keys', 'show', a, '--json')).expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 86_400_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 86_400_000);

    const b = await create('abrupt');
    const now = await run('keys', 'rotate', b, '--grace', '0', '--json');
    expect(now.code).toBe(0);
    expect(json(now).key.expiresAt).toBe(null);
    expect(Date.parse(json(await run('keys', 'show', b, '--json')).expiresAt)).toBeLessThanOrEqual(Date.now());
  });

  it('rotates a suspended key: the new key is active, the old one stays suspended', async () => {
    const id = await create('stopped');
    await run('keys', 'suspend', id);
    const rotated = await run('keys', 'rotate', id, '--json');
    expect(rotated.code).toBe(0);
    const next = json(rotated).key;
    expect(next).toMatchObject({ status: 'active', rotatedFrom: id });
    expect(json(await run('keys', 'show', id, '--json'))).toMatchObject({ status: 'suspended', rotatedTo: next.id });
  });

  it('refuses --grace without a unit or negative', async () => {
    const id = await create('picky');
    for (const grace of ['5', '-1h']) {
      const bad = await run('keys', 'rotate', id, '--grace', grace, '--json');
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stderr).error).toMatchObject({ code: 'invalid_input', field: '--grace' });
    }
  });
});
