// What a person typing a command wrong is told: the value they gave (unless it could be a key), the
// flag it belongs to, the package a store needs, and nothing created on disk by a refused command.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ensureBuilt, keygate, ROOT, type Run } from './support/keygate.js';

const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-input-'));
let n = 0;
/** A new empty working folder whose default store (`pglite:./.keygate`) does not exist yet. */
function freshFolder(): string {
  const cwd = join(dir, `run${++n}`);
  mkdirSync(cwd);
  return cwd;
}

/** Runs `keygate ...args` in a fresh folder over its default store; answers the run and the folder. */
async function inFreshFolder(...args: string[]): Promise<{ run: Run; cwd: string }> {
  const cwd = freshFolder();
  return { run: await keygate({ store: 'pglite:./.keygate', cwd }, ...args), cwd };
}

beforeAll(() => ensureBuilt());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a refused value', () => {
  it('a negative --amount given as its own word is read as the value, and refused naming it', async () => {
    const { run, cwd } = await inFreshFolder('credits', 'top-up', '--account', 'acct_1', '--amount', '-5');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--amount must be a whole number');
    expect(run.stderr).toContain('"-5"');
    expect(run.stderr).not.toContain('ambiguous');
    expect(existsSync(join(cwd, '.keygate'))).toBe(false);
  });

  it('a mode that is neither live nor test is shown back, and no store is created for the refused key', async () => {
    const { run, cwd } = await inFreshFolder('keys', 'create', '--account', 'a', '--name', 'n', '--mode', 'prod');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('keygate: mode must be "live" or "test", got "prod"\n');
    expect(existsSync(join(cwd, '.keygate'))).toBe(false);
  });

  it('a key pasted as the mode is described, never shown', async () => {
    const key = `mk_live_${'A1b2C3d4'.repeat(4)}x9`;
    const { run } = await inFreshFolder('keys', 'create', '--account', 'a', '--name', 'n', '--mode', key);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`got a string of ${key.length} characters`);
    expect(run.stderr).not.toContain('A1b2C3d4');
  });
});

describe('a store whose driver is not installed', () => {
  // The package as an app installs it, alone: node_modules/keygate with no driver beside it.
  let app: string;
  beforeAll(() => {
    app = join(dir, 'app');
    const pkg = join(app, 'node_modules/keygate');
    mkdirSync(pkg, { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
    cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
  });
  const cliIn = async (store: string): Promise<Run> => {
    const bin = join(app, 'node_modules/keygate', BIN.slice(ROOT.length + 1));
    const { execFile } = await import('node:child_process');
    return new Promise((resolve) =>
      execFile(
        process.execPath,
        [bin, 'keys', 'list', '--account', 'acct_1'],
        { cwd: app, env: { ...process.env, KEYGATE_STORE: store, NODE_PATH: '' }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      ),
    );
  };

  it.each([
    ['pglite:./.keygate', '@electric-sql/pglite'],
    ['postgres://127.0.0.1:5432/test', 'pg'],
    ['redis://127.0.0.1:6379', 'redis'],
    ['mysql://root@127.0.0.1:3306/test', 'mysql2'],
  ])('%s exits 1 naming the package to install, and creates nothing', async (store, pkg) => {
    const run = await cliIn(store);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`npm install ${pkg}`);
    expect(existsSync(join(app, '.keygate'))).toBe(false);
  });
});
