import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, keygate, type Run } from './support/keygate.js';

// `--rate-limit N/DURATION` on `keys create` and `keys update` (`none` removes the key's own limit),
// shown by `show` and `list`.
const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-rate-'));
const run = (...args: string[]) => keygate({ store: `pglite:${join(dir, 'db')}`, cwd: dir }, ...args);
const unused = (...args: string[]) => keygate({ store: `pglite:${join(dir, 'never')}`, cwd: dir }, ...args);
const json = (r: Run) => JSON.parse(r.stdout);
const account = 'acct_rate';

beforeAll(ensureBuilt, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// PGlite starts in each child process: several seconds per command on a loaded machine.
describe('keygate keys --rate-limit', { timeout: 60_000 }, () => {
  let id = '';

  it('create stores the limit in milliseconds, and show prints it back as written', async () => {
    const created = await run(
      'keys',
      'create',
      '--account',
      account,
      '--name',
      'ci',
      '--mode',
      'test',
      '--rate-limit',
      '100/1m',
      '--json',
    );
    expect(created.code).toBe(0);
    expect(json(created).key.rateLimit).toEqual({ limit: 100, windowMs: 60_000 });
    id = json(created).key.id;
    const show = await run('keys', 'show', id);
    expect(show.stdout).toMatch(/^ {2}rate limit +100\/1m$/m);
  });

  it.each([
    ['5000/1h', { limit: 5000, windowMs: 3_600_000 }, '5000/1h'],
    ['10/500ms', { limit: 10, windowMs: 500 }, '10/500ms'],
    ['100/m', { limit: 100, windowMs: 60_000 }, '100/1m'],
    ['2/1.5s', { limit: 2, windowMs: 1500 }, '2/1500ms'],
  ])('update --rate-limit %s sets %j, which list shows as %s', async (text, stored, shown) => {
    const updated = await run('keys', 'update', id, '--rate-limit', text, '--json');
    expect(updated.code).toBe(0);
    expect(json(updated).rateLimit).toEqual(stored);
    const list = await run('keys', 'list', '--account', account);
    expect(list.stdout).toMatch(new RegExp(`^ {2}rate limit +${shown.replace('.', '\\.')}$`, 'm'));
  });

  // A key without a limit of its own is held to the service's default limit, not unlimited: it says so.
  it.each([['default'], ['none']])(
    'update --rate-limit %s removes the key’s own limit, and show says the default applies',
    async (word) => {
      await run('keys', 'update', id, '--rate-limit', '100/1m');
      const updated = await run('keys', 'update', id, '--rate-limit', word, '--json');
      expect(updated.code).toBe(0);
      expect(json(updated).rateLimit).toBeNull();
      const shown = (await run('keys', 'show', id)).stdout;
      expect(shown).toMatch(/^ {2}rate limit +default \(no limit of its own\)$/m);
      expect(shown).not.toMatch(/^ {2}rate limit +none/m);
    },
  );

  it('a key created without the flag has no limit of its own, shown as default', async () => {
    const created = await run('keys', 'create', '--account', account, '--name', 'plain', '--mode', 'live');
    expect(created.stdout).toMatch(/^ {2}rate limit +default \(no limit of its own\)$/m);
    const id = /^Created (key_\w+)/.exec(created.stdout)?.[1] as string;
    expect(json(await run('keys', 'show', id, '--json')).rateLimit).toBeNull();
  });

  it.each([
    ['100', 'a bare number'],
    ['100/60', 'a window without a unit'],
    ['0/1m', 'a limit of 0'],
    ['-5/1m', 'a negative limit'],
    ['1.5/1m', 'a fractional limit'],
    ['100/1w', 'an unknown unit'],
    ['lots/1m', 'a word'],
  ])('refuses %s (%s) before the store is opened: exit 1, field --rate-limit', async (text) => {
    for (const args of [
      ['keys', 'create', '--account', account, '--name', 'x', '--mode', 'test', `--rate-limit=${text}`],
      ['keys', 'update', 'key_x', `--rate-limit=${text}`],
    ]) {
      const refused = await unused(...args, '--json');
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr).error).toMatchObject({ code: 'invalid_input', field: '--rate-limit' });
      expect(JSON.parse(refused.stderr).error.message).toContain('100/1m');
    }
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });

  it('--help of create and update names the flag with an example', async () => {
    for (const command of ['create', 'update']) {
      const help = await unused('keys', command, '--help');
      expect(help.stdout).toMatch(/--rate-limit N\/DURATION.*\(e\.g\. 100\/1m\)/);
    }
  });
});
