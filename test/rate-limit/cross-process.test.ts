import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { PostgresRateLimiter } from 'keygate/postgres';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const postgres = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');

// Children run the TypeScript sources, bundled by esbuild (as in test/stores/cross-process.test.ts);
// the bundle sits under node_modules/.cache so that its bare imports of the database clients resolve.
const root = resolve(import.meta.dirname, '../..');
const outDir = join(root, 'node_modules/.cache/keygate-cross-process');
const childFile = join(outDir, `rate-limit-child-${RUN_ID}.mjs`);
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  if (!postgres && !redis) return;
  await mkdir(outDir, { recursive: true });
  await build({
    entryPoints: [join(import.meta.dirname, 'support/consume-child.ts')],
    outfile: childFile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source', 'node'],
    external: ['pg', 'redis', '@electric-sql/pglite', 'lru-cache', 'ipaddr.js'],
    logLevel: 'silent',
  });
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await rm(childFile, { force: true });
});

interface Done {
  allowed: number;
  remaining: number[];
}

function child(args: Record<string, unknown>) {
  const proc: ChildProcess = spawn(process.execPath, [childFile, JSON.stringify(args)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  cleanups.push(async () => proc.kill());
  const events = new Map<string, (event: Record<string, unknown>) => void>();
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    const event = JSON.parse(line) as Record<string, unknown>;
    events.get(String(event.event))?.(event);
  });
  const next = (name: string) =>
    new Promise<Record<string, unknown>>((resolveEvent, reject) => {
      events.set(name, resolveEvent);
      proc.once('exit', (code) => reject(new Error(`child exited (${code}) before "${name}"`)));
    });
  const ready = next('ready');
  const done = next('done') as Promise<unknown> as Promise<Done>;
  return { ready, done, go: () => proc.stdin!.write('go\n') };
}

async function pgNamespace(): Promise<string> {
  const schema = `keygate_rlx${RUN_ID}`;
  const pool = new pg.Pool({ connectionString: PG_URL });
  await new PostgresRateLimiter({ client: pool, schema }).migrate();
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });
  return schema;
}

async function redisNamespace(): Promise<string> {
  const prefix = `keygate:test:${RUN_ID}:rlx:`;
  const client = await createClient({ url: REDIS_URL }).connect();
  cleanups.push(async () => {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*` })) if (keys.length) await client.del(keys);
    client.destroy();
  });
  return prefix;
}

const backends = [
  { name: 'postgres', kind: 'postgres', url: PG_URL, available: postgres, namespace: pgNamespace },
  { name: 'redis', kind: 'redis', url: REDIS_URL, available: redis, namespace: redisNamespace },
].filter((b) => b.available);

describe.skipIf(backends.length === 0)('rate limits across processes', () => {
  it.each(backends)(
    '4 processes x 100 concurrent requests against a limit of 150 allow exactly 150 ($name)',
    async ({ kind, url, namespace }) => {
      const common = { kind, url, namespace: await namespace(), keyId: `key_x${RUN_ID}`, limit: 150, windowMs: 60_000 };
      const children = Array.from({ length: 4 }, () => child({ ...common, n: 100 }));
      await Promise.all(children.map((c) => c.ready));
      for (const c of children) c.go();
      const results = await Promise.all(children.map((c) => c.done));
      expect(results.reduce((n, r) => n + r.allowed, 0)).toBe(150);
      // Every allowed request, whichever process sent it, left a different count behind: 149 down to 0.
      const remaining = results.flatMap((r) => r.remaining).sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 150 }, (_, i) => i));
    },
    60_000,
  );
});
