// `keygate keys list`: one line per key on a terminal (a table), every field of each key in a pipe or
// a file, `--format` to choose, and `--json` unchanged. Run in-process, where a test can say whether
// stdout is a terminal.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticate, type ManagedKey, UsageRecorder } from 'keygate';
import { openPGliteFolder } from 'keygate/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-list-'));
const folder = join(dir, 'db');
const account = 'acct_list';
const LONG_NAME = `billing-worker-${'x'.repeat(40)}`;

async function cli(argv: string[], { terminal, store = folder }: { terminal: boolean; store?: string }) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--store', `pglite:${store}`], {
    env: {},
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
    terminal,
  });
  return { code, stdout, stderr };
}

const list = (terminal: boolean, ...more: string[]) =>
  cli(['keys', 'list', '--account', account, ...more], { terminal });
const minute = (iso: string) => iso.slice(0, 16).replace('T', ' ');

let used: ManagedKey;
let unused: ManagedKey;
let usedAt = '';

beforeAll(async () => {
  const create = async (name: string, mode: string) =>
    JSON.parse(
      (
        await cli(['keys', 'create', '--account', account, '--name', name, '--mode', mode, '--json'], {
          terminal: false,
        })
      ).stdout,
    ) as { secret: string; key: ManagedKey };
  const first = await create('ci', 'test');
  used = first.key;
  unused = (await create(LONG_NAME, 'live')).key;
  // One allowed request with the first key, counted the way a service counts it.
  const { store, close } = await openPGliteFolder(folder);
  const usage = new UsageRecorder({ store });
  const request = { headers: { 'x-api-key': first.secret }, ip: '127.0.0.1' };
  usage.record(await authenticate(request, store), request);
  await usage.close();
  usedAt = (await store.getActivity(used.id))?.lastUsedAt ?? '';
  await close();
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('keygate keys list', { timeout: 60_000 }, () => {
  it('on a terminal prints a table: a header, then one line per key with id, name, mode, status, hint, created, last used', async () => {
    const run = await list(true);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]?.split(/ {2,}/)).toEqual([
      'ID',
      'NAME',
      'MODE',
      'STATUS',
      'HINT',
      'CREATED (UTC)',
      'LAST USED (UTC)',
    ]);
    expect(usedAt).not.toBe('');
    expect(lines[1]?.split(/ {2,}/)).toEqual([
      used.id,
      'ci',
      'test',
      'active',
      used.hint,
      minute(used.createdAt),
      minute(usedAt),
    ]);
    // A long name is cut to keep the line short; `keys show` prints it whole.
    const [, name, ...rest] = lines[2]?.split(/ {2,}/) ?? [];
    expect(name).toMatch(/^billing-worker-x+…$/);
    expect(name?.length).toBeLessThan(LONG_NAME.length);
    expect(rest).toEqual(['live', 'active', unused.hint, minute(unused.createdAt), 'never']);
  });

  it('in a pipe or a file prints every field of each key, as before', async () => {
    const run = await list(false);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}id +key_\w+$/m);
    expect(run.stdout).toMatch(/^ {2}permissions +\(none\)$/m);
    expect(run.stdout).toContain(LONG_NAME);
    expect(run.stdout).not.toContain('LAST USED');
  });

  it('--format chooses either view wherever stdout goes', async () => {
    expect((await list(true, '--format', 'details')).stdout).toMatch(/^ {2}id +key_\w+$/m);
    expect((await list(false, '--format', 'table')).stdout).toMatch(/^ID +NAME +MODE/);
  });

  it('--json prints the same array of keys on a terminal as elsewhere', async () => {
    const onTerminal = await list(true, '--json');
    const inPipe = await list(false, '--json');
    expect(onTerminal.code).toBe(0);
    const keys = JSON.parse(onTerminal.stdout);
    expect(keys.map((k: ManagedKey) => k.id)).toEqual([used.id, unused.id]);
    expect(JSON.parse(inPipe.stdout)).toEqual(keys);
  });

  it('refuses any other --format before the store is opened: exit 1, field --format', async () => {
    const never = join(dir, 'never');
    const run = await cli(['keys', 'list', '--account', account, '--format', 'wide', '--json'], {
      terminal: true,
      store: never,
    });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({ code: 'invalid_input', field: '--format' });
    expect(existsSync(never)).toBe(false);
  });
});
