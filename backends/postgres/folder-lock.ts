import { KeyStoreUnavailableError, StoreLockedError } from 'keygate';

/** The lock file's name inside the folder it guards. */
export const LOCK_FILE = 'keygate.lock';

/** What a lock file says about its holder. */
interface Holder {
  pid: number;
  host: string;
  /** The process's start time as the kernel counts it (Linux `/proc`), to tell a reused pid; null elsewhere. */
  started: string | null;
  /** The script that took the lock (a file name only, never arguments, which may hold a pepper). */
  program: string;
  since: string;
}

/** A held folder lock. */
export interface FolderLock {
  /** The lock file. */
  readonly path: string;
  /** Removes the lock file if it is still this holder's. Idempotent. */
  release(): Promise<void>;
}

type Fs = typeof import('node:fs/promises');

/** The Node facilities the lock uses, and the host it runs on. */
interface Node {
  fs: Fs;
  host: string;
}

/**
 * Imports a module when called, through a specifier bundlers do not follow: Node modules and PGlite
 * load when a folder is opened, never at import, so `keygate/postgres` stays importable where there is
 * no file system (Workers, browsers).
 *
 * @example
 * const fs = await load<typeof import('node:fs/promises')>('node:fs/promises');
 */
export const load = <T>(specifier: string): Promise<T> => import(specifier);

async function loadNode(): Promise<Node> {
  const [fs, os] = await Promise.all([load<Fs>('node:fs/promises'), load<typeof import('node:os')>('node:os')]);
  return { fs, host: os.hostname() };
}

/**
 * Makes `dir` (created 0700 when missing) single-writer: creates `dir/keygate.lock` atomically, holding
 * this process's pid, host and start time. A lock whose holder is gone (no such pid, or the pid now
 * belongs to a later process) is stale and taken over, so a killed process never blocks a restart.
 *
 * @throws StoreLockedError (`store_locked`, `holderPid`) when another live process, or this one, holds it.
 * @example
 * const lock = await lockFolder('./.keygate');
 * try { ... } finally { await lock.release(); }
 */
export async function lockFolder(dir: string): Promise<FolderLock> {
  const node = await loadNode();
  const { fs } = node;
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = `${dir.replace(/[\\/]+$/, '')}/${LOCK_FILE}`;
  const mine = JSON.stringify(await currentHolder(node));
  const draft = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await fs.writeFile(draft, mine, { mode: 0o600 });
  try {
    // A few rounds: each either takes the lock, refuses a live holder, or clears a stale one.
    for (let round = 0; round < 5; round++) {
      if (await tryCreate(fs, { draft, path, mine })) return heldLock(fs, path, mine);
      const found = await fs.readFile(path, 'utf8').catch(() => null);
      if (found === null) continue;
      const holder = parseHolder(found);
      if (holder && (await isAlive(node, holder))) throw lockedError(node, dir, path, holder);
      await clearStale(fs, path, found);
    }
    throw new KeyStoreUnavailableError(`${dir}: the lock ${path} kept changing hands; try again`);
  } finally {
    await fs.rm(draft, { force: true });
  }
}

// link() creates the lock file complete and atomically, failing when it exists: no reader ever sees
// a half-written lock. A file system without hard links gets an exclusive create instead; a reader
// that meets it still empty judges it stale, and clearStale puts it back once it has content.
async function tryCreate(fs: Fs, file: { draft: string; path: string; mine: string }): Promise<boolean> {
  try {
    await fs.link(file.draft, file.path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
  }
  try {
    await fs.writeFile(file.path, file.mine, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function heldLock(fs: Fs, path: string, mine: string): FolderLock {
  let released = false;
  return {
    path,
    async release() {
      if (released) return;
      released = true;
      const now = await fs.readFile(path, 'utf8').catch(() => null);
      if (now === mine) await fs.rm(path, { force: true });
    },
  };
}

// Moves the stale lock aside under a name of our own and removes it only if it is still the lock we
// judged stale; had another process replaced it meanwhile, its lock is put back.
async function clearStale(fs: Fs, path: string, judged: string): Promise<void> {
  const aside = `${path}.stale.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    await fs.rename(path, aside);
  } catch {
    return; // gone already: the next round sees what is there now
  }
  const moved = await fs.readFile(aside, 'utf8').catch(() => null);
  if (moved !== judged) await putBack(fs, aside, path);
  await fs.rm(aside, { force: true });
}

// Never over a lock that appeared meanwhile: link fails on an existing file (rename, the fallback
// where there are no hard links, would not).
async function putBack(fs: Fs, aside: string, path: string): Promise<void> {
  try {
    await fs.link(aside, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') await fs.rename(aside, path).catch(() => {});
  }
}

async function currentHolder(node: Node): Promise<Holder> {
  const script = process.argv[1] ?? '';
  return {
    pid: process.pid,
    host: node.host,
    started: await startTime(node.fs, process.pid),
    program: script.split(/[\\/]/).pop() || 'node',
    since: new Date().toISOString(),
  };
}

function parseHolder(text: string): Holder | null {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    if (!Number.isInteger(h.pid) || typeof h.host !== 'string') return null;
    return {
      pid: h.pid as number,
      host: h.host,
      started: typeof h.started === 'string' ? h.started : null,
      program: typeof h.program === 'string' ? h.program : 'unknown',
      since: typeof h.since === 'string' ? h.since : 'unknown',
    };
  } catch {
    return null; // not a lock keygate wrote whole (it writes atomically): treat as stale
  }
}

// A holder on another host cannot be checked from here, so it counts as alive (fail closed).
async function isAlive(node: Node, holder: Holder): Promise<boolean> {
  if (holder.host !== node.host) return true;
  if (!pidExists(holder.pid)) return false;
  if (holder.started === null) return true;
  const started = await startTime(node.fs, holder.pid);
  return started === null || started === holder.started;
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, owned by another user
  }
}

// Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may contain spaces).
async function startTime(fs: Fs, pid: number): Promise<string | null> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}

function lockedError(node: Node, dir: string, path: string, holder: Holder): StoreLockedError {
  const here = holder.host === node.host;
  const who = here && holder.pid === process.pid ? 'this process' : `process ${holder.pid}`;
  const remote = here
    ? ''
    : `; it runs on ${holder.host} and cannot be checked from here: if it has stopped, delete ${path}`;
  return new StoreLockedError(
    dir,
    holder.pid,
    `${dir} is held by ${who} (${holder.program}, since ${holder.since}); ` +
      `an embedded PGlite folder takes one process at a time${remote}`,
  );
}
