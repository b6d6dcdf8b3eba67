import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KeyManager } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import type { UsageStore, WritableKeyStore } from 'keygate/store-kit';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle } from '../stores/support/child-process.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const run = promisify(execFile);
const postgres = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redis = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');

const cleanups: Array<() => Promise<unknown>> = [];
let bundle: ChildBundle | undefined;

beforeAll(async () => {
  if (postgres || redis) bundle = await bundleChild(join(import.meta.dirname, 'support/usage-child.ts'));
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
});

async function backend(
  kind: 'postgres' | 'redis',
): Promise<{ store: WritableKeyStore & UsageStore; url: string; namespace: string }> {
  if (kind === 'postgres') {
    const namespace = `kg_usage_${RUN_ID}`;
    const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    const store = new PostgresKeyStore({ client: pool, schema: namespace });
    await store.migrate();
    cleanups.push(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`);
      await pool.end();
    });
    return { store, url: PG_URL, namespace };
  }
  const namespace = `keygate-usage-${RUN_ID}:`;
  const client = await createClient({ url: REDIS_URL }).connect();
  cleanups.push(async () => {
    for await (const keys of client.scanIterator({ MATCH: `${namespace}*`, COUNT: 1000 })) {
      if (keys.length) await client.del(keys);
    }
    client.destroy();
  });
  return { store: new RedisKeyStore({ client, prefix: namespace }), url: REDIS_URL, namespace };
}

describe.each([
  ['postgres', postgres],
  ['redis', redis],
] as const)('usage counts from two processes on one %s store', (kind, available) => {
  it.skipIf(!available)(
    'add up exactly, split by outcome',
    async () => {
      const { store, url, namespace } = await backend(kind);
      const keys = new KeyManager({ store });
      const { secret, key } = await keys.create({
        accountId: 'acct_usage',
        name: 'usage',
        mode: 'live',
        permissions: ['email:verify'],
        allowedIps: ['203.0.113.0/24'],
      });
      const mixes = [
        { allowed: 700, wrongAddress: 150, missingPermission: 90 },
        { allowed: 450, wrongAddress: 60, missingPermission: 210 },
      ];
      const outputs = await Promise.all(
        mixes.map((mix) =>
          run(process.execPath, [bundle!.file, JSON.stringify({ kind, url, namespace, secret, ...mix })], {
            timeout: 60_000,
          }),
        ),
      );
      expect(outputs.map((o) => JSON.parse(o.stdout).done)).toEqual([940, 720]);
      const day = new Date().toISOString().slice(0, 10);
      const report = await new KeyManager({ store }).usage(key.id, { from: day, to: day });
      console.log(
        `usage read back (${kind}): ${JSON.stringify({ allowed: report.allowed, deniedBy: report.deniedBy })}`,
      );
      expect(report.allowed).toBe(700 + 450);
      expect(report.deniedBy).toEqual({ ip_not_allowed: 150 + 60, insufficient_permissions: 90 + 210 });
      expect(report.denied).toBe(510);
      expect(report.lastUsedAt).not.toBeNull();
    },
    90_000,
  );
});
