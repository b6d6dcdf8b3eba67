// `keygate audit`: the audit log the CLI's own changes wrote, with the operating system's user as
// actor; a table on a terminal, every field in a pipe, --json unchanged, paging with --before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { AuditEntry, ManagedKey } from 'keygate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-audit-'));
const folder = join(dir, 'db');
const account = 'acct_audit';

async function cli(argv: string[], terminal = false) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--store', `pglite:${folder}`], {
    env: {},
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
    terminal,
  });
  return { code, stdout, stderr };
}

const audit = async (...more: string[]) =>
  JSON.parse((await cli(['audit', '--account', account, '--json', ...more])).stdout) as AuditEntry[];

let key: ManagedKey;

beforeAll(async () => {
  const created = await cli(['keys', 'create', '--account', account, '--name', 'ci', '--mode', 'test', '--json']);
  key = JSON.parse(created.stdout).key;
  await cli(['keys', 'update', key.id, '--name', 'ci-2', '--allow', '203.0.113.0/24']);
  await cli(['keys', 'revoke', key.id, '--yes']);
  await cli(['keys', 'create', '--account', account, '--name', 'other', '--mode', 'live']);
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('keygate audit', () => {
  it("records the CLI's changes with actor cli and the operating system's user name", async () => {
    const entries = await audit();
    expect(entries.map((e) => e.action)).toEqual(['key.created', 'key.revoked', 'key.updated', 'key.created']);
    for (const entry of entries) expect(entry.actor).toEqual({ type: 'cli', id: userInfo().username });
    expect(entries[2]?.changes).toEqual({
      name: { before: 'ci', after: 'ci-2' },
      allowedIps: { before: [], after: ['203.0.113.0/24'] },
    });
  });

  it("lists one key's entries with --key", async () => {
    expect((await audit('--key', key.id)).map((e) => e.action)).toEqual(['key.revoked', 'key.updated', 'key.created']);
  });

  it('prints a table on a terminal: when, action, key, actor and the changes in one line', async () => {
    const { code, stdout } = await cli(['audit', '--account', account, '--key', key.id], true);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^WHEN \(UTC\)\s+ACTION\s+KEY\s+ACTOR\s+CHANGES$/);
    expect(lines[1]).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}  key\\.revoked  ${key.id}  cli`));
    expect(lines[1]).toContain('status: active → revoked');
    expect(lines[2]).toContain('name: ci → ci-2; allowedIps: any address → 203.0.113.0/24');
    expect(lines[3]).toContain('name ci; mode test; permissions none');
  });

  it('prints every field of each entry in a pipe', async () => {
    const { stdout } = await cli(['audit', '--account', account, '--limit', '1']);
    expect(stdout).toMatch(/^ {2}id {7}aud_[0-9a-z]{23}$/m);
    expect(stdout).toMatch(/^ {2}action {3}key\.created$/m);
    expect(stdout).toContain('older entries: --before aud_');
  });

  it('pages with --limit and --before, each entry once', async () => {
    const all = await audit();
    const first = await audit('--limit', '3');
    const rest = await audit('--before', first.at(-1)?.id ?? '');
    expect([...first, ...rest].map((e) => e.id)).toEqual(all.map((e) => e.id));
    const { stdout } = await cli(['audit', '--account', account, '--before', all.at(-1)?.id ?? '']);
    expect(stdout.trim()).toBe('no older entries');
  });

  it.each([
    ['--limit', ['--limit', 'ten']],
    ['--limit', ['--limit', '0']],
    ['--format', ['--format', 'csv']],
  ])('refuses a bad %s with exit code 1, naming it', async (field, flags) => {
    const { code, stderr } = await cli(['audit', '--account', account, ...flags]);
    expect(code).toBe(1);
    expect(stderr).toContain(field === '--limit' && flags[1] === '0' ? 'limit' : field);
  });

  it('lists the audit command in --help', async () => {
    const { stdout } = await cli(['--help']);
    expect(stdout).toContain(
      'keygate audit --account A [--key ID] [--limit N] [--before ENTRY] [--format table|details]',
    );
  });
});
