// A process killed between a key write and its audit entry loses neither: over a store that writes the
// entry in the key write itself (PostgreSQL, Redis, a SQLite file), every key change stored has its
// entry after a SIGKILL, whether the kill falls in the event hook that runs right after each key
// write (where the entry used to be appended next) or at a random moment of a loop of writes.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { type AuditLog, capabilityOf } from 'keygate';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from '../stores/support/child-process.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { SqliteFiles } from '../stores/support/sqlite-files.js';
import { type CrashBackend, openCrashStore } from './support/crash-stores.js';
import { unrecordedChanges } from './support/unrecorded.js';

const pgAvailable = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redisAvailable = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const files = new SqliteFiles();
const schemas: string[] = [];
const REDIS_PREFIX = `keygate:test:${RUN_ID}:crash:`;
const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;
let made = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Backend {
  name: string;
  available: boolean;
  /** A fresh, migrated backend nobody else writes to. */
  fresh(): Promise<CrashBackend>;
}

const BACKENDS: Backend[] = [
  {
    name: 'PostgreSQL',
    available: pgAvailable,
    fresh: () => migrated({ kind: 'postgres', url: PG_URL, schema: `keygate_crash${RUN_ID}_${++made}` }),
  },
  {
    name: 'Redis',
    available: redisAvailable,
    fresh: async () => ({ kind: 'redis', url: REDIS_URL, prefix: `${REDIS_PREFIX}${++made}:` }),
  },
  { name: 'a SQLite file', available: true, fresh: () => migrated({ kind: 'sqlite', path: files.path() }) },
];

async function migrated(backend: CrashBackend): Promise<CrashBackend> {
  if (backend.kind === 'postgres') schemas.push(backend.schema);
  const { store, close } = await openCrashStore(backend);
  await store.migrate?.();
  await close();
  return backend;
}

// The order of the key events of one round of the child (see support/crash-child.ts).
const ROUND = [
  'key.created',
  'key.updated',
  'key.suspended',
  'key.resumed',
  'key.rotated',
  'key.revoked',
  'key.imported',
];

beforeAll(async () => {
  bundle = await bundleChild(join(import.meta.dirname, 'support/crash-child.ts'));
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
  files.removeAll();
  if (pgAvailable && schemas.length > 0) {
    const pool = new pg.Pool({ connectionString: PG_URL });
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
  if (redisAvailable) {
    const client = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of client.scanIterator({ MATCH: `${REDIS_PREFIX}*`, COUNT: 1000 })) {
      if (keys.length) await client.del(keys);
    }
    client.destroy();
  }
});

function exited(proc: ChildProcess): Promise<NodeJS.Signals | number | null> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve(proc.signalCode ?? proc.exitCode);
    else proc.once('exit', (code, signal) => resolve(signal ?? code));
  });
}

/** Starts a child writing to `accountId`, lets it go, and answers its process once it runs. */
async function writer(backend: CrashBackend, accountId: string, killAtEvent?: number): Promise<ChildProcess> {
  const child = startChild(bundle!.file, { backend, accountId, ...(killAtEvent && { killAtEvent }) }, cleanups);
  await child.next('ready');
  child.send('go');
  return child.process;
}

/** The account's key changes without their entry (and entries without their change), read through a store of its own. */
async function check(backend: CrashBackend, accountId: string) {
  const { store, close } = await openCrashStore(backend);
  try {
    return await unrecordedChanges(store, capabilityOf(store, 'audit') as AuditLog, accountId);
  } finally {
    await close();
  }
}

describe.each(BACKENDS)('audit entries of a process killed between writes, over $name', (backend) => {
  it.skipIf(!backend.available).each(ROUND.map((action, i) => [action, i + 1] as const))(
    'a process SIGKILLed in the event hook of %s (key event %i, right after its key write) leaves every key change with its entry',
    async (_action, n) => {
      const store = await backend.fresh();
      const accountId = `acct_crash_${RUN_ID}_${n}`;
      expect(await exited(await writer(store, accountId, n))).toBe('SIGKILL');
      const { problems, keys, entries } = await check(store, accountId);
      expect(problems).toEqual([]);
      // Every event up to the kill had its write: the first round's keys and entries so far.
      expect({ keys, entries }).toEqual({ keys: n < 5 ? 1 : n < 7 ? 2 : 3, entries: n });
    },
    30_000,
  );

  it.skipIf(!backend.available)(
    'processes SIGKILLed at 5 random moments of a loop of key writes leave every key change with its entry',
    async () => {
      const store = await backend.fresh();
      const accountId = `acct_crash_${RUN_ID}_random`;
      const seen: { keys: number; entries: number; afterMs: number }[] = [];
      for (let kill = 0; kill < 5; kill++) {
        const proc = await writer(store, accountId);
        const afterMs = Math.round(20 + Math.random() * 400);
        await sleep(afterMs);
        proc.kill('SIGKILL');
        expect(await exited(proc)).toBe('SIGKILL');
        const { problems, keys, entries } = await check(store, accountId);
        expect(problems).toEqual([]);
        seen.push({ keys, entries, afterMs });
      }
      console.log(`${backend.name}: after each random kill (keys, entries, kill after ms): ${JSON.stringify(seen)}`);
      expect((seen.at(-1)?.entries ?? 0) > 0).toBe(true);
    },
    60_000,
  );
});
