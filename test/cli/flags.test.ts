import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from 'keygate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, keygate, type Run } from './support/keygate.js';

// Human durations on the CLI's flags, and what its errors may and may not print.
const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-flags-'));
const store = `pglite:${join(dir, 'db')}`;
const run = (...args: string[]) => keygate({ store, cwd: dir }, ...args);
const unused = (...args: string[]) => keygate({ store: `pglite:${join(dir, 'never')}`, cwd: dir }, ...args);
const errorOf = (r: Run) => JSON.parse(r.stderr).error;

beforeAll(ensureBuilt, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('duration flags', () => {
  it.each([
    [['keys', 'list', '--account', 'a', '--unused-for', '90'], '--unused-for'],
    [['keys', 'rotation-status', 'key_x', '--quiet-for', '15'], '--quiet-for'],
    [['keys', 'revoke', 'key_x', '--yes', '--quiet-for', '15'], '--quiet-for'],
    [['keys', 'revoke', 'key_x', '--yes', '--quiet-for', '1.5'], '--quiet-for'],
    [['keys', 'list', '--account', 'a', '--unused-for', '7 days'], '--unused-for'],
    [['keys', 'list', '--account', 'a', '--unused-for=-1d'], '--unused-for'],
    [['keys', 'list', '--account', 'a', '--unused-for', '2w'], '--unused-for'],
  ])('%j is refused before the store is opened: exit 1, field %s, an example with a unit', async (args, flag) => {
    const refused = await unused(...args, '--json');
    expect(refused.code).toBe(1);
    expect(errorOf(refused)).toMatchObject({ code: 'invalid_input', field: flag });
    expect(errorOf(refused).message).toMatch(new RegExp(`e\\.g\\. ${flag} [\\d.]+(ms|s|m|h|d)\\b`));
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });

  it('--quiet-for and --unused-for reach the manager in milliseconds, whatever the unit', async () => {
    const account = 'acct_durations';
    const created = JSON.parse(
      (await run('keys', 'create', '--account', account, '--name', 'a', '--mode', 'test', '--json')).stdout,
    );
    const id = created.key.id as string;
    expect((await run('keys', 'rotate', id)).code).toBe(0);
    for (const [text, ms] of [
      ['500ms', 500],
      ['30s', 30_000],
      ['15m', 900_000],
      ['1.5h', 5_400_000],
      ['7d', 604_800_000],
    ] as const) {
      const status = await run('keys', 'rotation-status', id, '--quiet-for', text, '--json');
      expect({ text, code: status.code }).toEqual({ text, code: 0 });
      const body = JSON.parse(status.stdout);
      expect(body.quietForMs ?? body.quietPeriodMs).toBe(ms);
    }
    const ids = async (unusedFor: string) =>
      JSON.parse((await run('keys', 'list', '--account', account, '--unused-for', unusedFor, '--json')).stdout).map(
        (k: { id: string }) => k.id,
      );
    expect(await ids('90d')).toEqual([]);
    expect((await ids('0ms')).length).toBe(2);
    const human = await run('keys', 'rotation-status', id);
    expect(human.stdout).toContain('deploy the new key');
  }, 180_000);
});

describe('errors never carry a raw key', () => {
  const secret = generateKey({ mode: 'live' });
  it.each([
    [['keys', 'create', '--account', 'a', '--name', 'n', '--mode', secret], 1, 'invalid_input'],
    [['keys', 'show', secret], 2, 'key_not_found'],
    [['keys', 'revoke', secret, '--yes'], 2, 'key_not_found'],
    [['keys', 'update', secret, '--name', 'x'], 2, 'key_not_found'],
    [['usage', secret], 2, 'key_not_found'],
    [[secret], 1, 'invalid_input'],
  ])(
    '%j exits %i (%s) and prints no raw key, in either form',
    async (args, exit, code) => {
      for (const json of [false, true]) {
        const refused = await run(...(args as string[]), ...(json ? ['--json'] : []));
        expect(refused.code).toBe(exit);
        if (json) expect(errorOf(refused).code).toBe(code);
        expect(refused.stdout + refused.stderr).not.toContain(secret);
        expect(refused.stdout + refused.stderr).not.toMatch(/mk_(live|test)_[0-9A-Za-z]{38}/);
      }
    },
    120_000,
  );
});

describe('names that disguise themselves', () => {
  it.each([
    ['a right-to-left override', 'invoice\u202efdp.exe', '--name', 'name'],
    ['a C1 control', 'ci\u009b31m', '--name', 'name'],
    ['only zero-width characters', '\u200b\u200d', '--name', 'name'],
    ['a right-to-left override', 'acct\u202e1', '--account', 'accountId'],
  ])(
    'with %s are refused: exit 1, invalid_input naming the field, nothing written',
    async (_, value, flag, field) => {
      const account = 'acct_disguise';
      const args = { '--account': account, '--name': 'ci', [flag]: value };
      const refused = await run('keys', 'create', ...Object.entries(args).flat(), '--mode', 'test', '--json');
      expect(refused.code).toBe(1);
      expect(errorOf(refused)).toMatchObject({ code: 'invalid_input', field });
      const listed = await run('keys', 'list', '--account', account, '--json');
      expect(JSON.parse(listed.stdout)).toEqual([]);
    },
    60_000,
  );
});
