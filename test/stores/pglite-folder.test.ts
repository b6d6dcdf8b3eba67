import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { KeyManager } from 'keygate';
import { openPGliteFolder } from 'keygate/postgres';
import { afterAll, describe, expect, it } from 'vitest';

// openPGliteFolder: one process per embedded store folder, and what counts as
// a holder that is gone.
const root = mkdtempSync(join(tmpdir(), 'keygate-folder-'));
let folders = 0;
const folder = () => join(root, `db${folders++}`);
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill();
  rmSync(root, { recursive: true, force: true });
});

const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'keygate.lock'), 'utf8'));
const hasProc = existsSync('/proc/self/stat');
const startOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
};

/** A folder whose lock names `holder`, as a process that took it would have written it. */
function lockedBy(holder: Record<string, unknown>): string {
  const dir = folder();
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'keygate.lock'),
    JSON.stringify({ host: hostname(), program: 'x.js', since: 'then', ...holder }),
  );
  return dir;
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid as number;
}

function liveChild(): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
  children.push(child);
  return child;
}

describe('openPGliteFolder', { timeout: 120_000 }, () => {
  it('keeps keys across opens, creates the folder 0700 and the lock 0600, and releases it on close', async () => {
    const dir = folder();
    const first = await openPGliteFolder(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'keygate.lock')).mode & 0o777).toBe(0o600);
    expect(lockOf(dir)).toMatchObject({ pid: process.pid, host: hostname() });
    const { key } = await new KeyManager({ store: first.store }).create({ accountId: 'a', name: 'n', mode: 'test' });
    await first.close();
    await first.close(); // idempotent
    expect(existsSync(join(dir, 'keygate.lock'))).toBe(false);

    const second = await openPGliteFolder(dir);
    expect((await new KeyManager({ store: second.store }).get(key.id))?.id).toBe(key.id);
    await second.close();
  });

  it('refuses a second open in the same process while the first is open', async () => {
    const dir = folder();
    const first = await openPGliteFolder(dir);
    try {
      await expect(openPGliteFolder(dir)).rejects.toMatchObject({
        code: 'store_locked',
        holderPid: process.pid,
        path: dir,
      });
    } finally {
      await first.close();
    }
  });

  it('refuses a folder held by another live process, and leaves its lock in place', async () => {
    const child = liveChild();
    await once(child, 'spawn');
    const pid = child.pid as number;
    const dir = lockedBy({ pid, started: hasProc ? startOf(pid) : null });
    const before = readFileSync(join(dir, 'keygate.lock'), 'utf8');
    await expect(openPGliteFolder(dir)).rejects.toMatchObject({ code: 'store_locked', holderPid: pid, field: 'store' });
    expect(readFileSync(join(dir, 'keygate.lock'), 'utf8')).toBe(before);
  });

  it('refuses a lock taken on another host, which it cannot check, and says which file to delete', async () => {
    const dir = lockedBy({ pid: await deadPid(), host: 'elsewhere.example', started: null });
    await expect(openPGliteFolder(dir)).rejects.toMatchObject({ code: 'store_locked' });
    await expect(openPGliteFolder(dir)).rejects.toThrow(join(dir, 'keygate.lock'));
  });

  it.each([
    ['a process that has exited', async () => ({ pid: await deadPid(), started: null })],
    ['a pid that now belongs to a later process', async () => ({ pid: process.ppid, started: '1' }), !hasProc],
    ['an unreadable lock file', async () => ({ pid: 'not a pid' })],
  ] as const)('takes over a stale lock left by %s', async (_, holder, skip = false) => {
    if (skip) return;
    const dir = lockedBy(await holder());
    const opened = await openPGliteFolder(dir);
    try {
      expect(lockOf(dir)).toMatchObject({ pid: process.pid });
    } finally {
      await opened.close();
    }
  });

  it('lets exactly one of two racing opens take over a stale lock', async () => {
    const dir = lockedBy({ pid: await deadPid(), started: null });
    const results = await Promise.allSettled([openPGliteFolder(dir), openPGliteFolder(dir)]);
    const opened = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(opened).toHaveLength(1);
    expect(refused.map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(['store_locked']);
    await (opened[0] as PromiseFulfilledResult<{ close(): Promise<void> }>).value.close();
  });
});

describe('keygate/postgres outside Node', () => {
  it('bundles for a browser or Worker with no node: module and without @electric-sql/pglite', async () => {
    const result = await build({
      entryPoints: [join(import.meta.dirname, '../../backends/postgres/index.ts')],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      metafile: true,
      external: ['keygate', 'pg'],
      logLevel: 'silent',
    });
    const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
    expect(imports.filter((path) => path.startsWith('node:') || path.includes('pglite'))).toEqual([]);
  });
});
