import { join } from 'node:path';
import type { CreditEntry } from 'keygate';
import { RedisCreditLedger } from 'keygate/redis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from '../stores/support/child-process.js';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const available = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const PREFIX = `keygate:test:${RUN_ID}:cx:`;

// Children run the TypeScript sources, bundled by esbuild (see stores/support/child-process.ts).
const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;
const open = () => createClient({ url: REDIS_URL }).connect();
let client: Awaited<ReturnType<typeof open>> | undefined;

beforeAll(async () => {
  if (!available) return;
  bundle = await bundleChild(join(import.meta.dirname, 'support/redis-hold-child.ts'));
  client = await open();
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
  if (!client) return;
  for await (const keys of client.scanIterator({ MATCH: `${PREFIX}*` })) if (keys.length) await client.del(keys);
  client.destroy();
});

const sumOf = (entries: readonly CreditEntry[]) => entries.reduce((sum, e) => sum + e.amount, 0);

describe.skipIf(!available)('RedisCreditLedger across processes', () => {
  it('3 processes x 50 concurrent holds of 1 against 100 credits grant exactly 100; settling half and releasing half reconciles', async () => {
    const ledger = new RedisCreditLedger({ client: client!, prefix: PREFIX, timeoutMs: 30_000 });
    const accountId = `acct_x${RUN_ID}`;
    await ledger.topUp(accountId, 100, { reference: 'pay_1' });
    const args = { url: REDIS_URL, prefix: PREFIX, accountId, n: 50, ttlMs: 600_000 };
    const children = Array.from({ length: 3 }, () => startChild(bundle!.file, args, cleanups));
    await Promise.all(children.map((c) => c.next('ready')));
    for (const c of children) c.send('go');
    const done = await Promise.all(children.map((c) => c.next('done')));
    const holdIds = done.flatMap((d) => d.holdIds as string[]);
    expect(holdIds).toHaveLength(100);
    expect(new Set(holdIds).size).toBe(100);
    expect(await ledger.balance(accountId)).toBe(0);
    // The entries (one top-up of 100) add up to the balance (0) plus the open holds (100).
    expect(sumOf(await ledger.entries(accountId))).toBe(0 + holdIds.length);
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 100, balance: 0, held: 100, ok: true });

    // Any process may close any hold: this one settles the first half and releases the rest, at once.
    const [settled, released] = [holdIds.slice(0, 50), holdIds.slice(50)];
    const [settles] = await Promise.all([
      Promise.all(settled.map((id) => ledger.settle(id))),
      Promise.all(released.map((id) => ledger.release(id))),
    ]);
    expect(settles.reduce((n, s) => n + s.charged, 0)).toBe(50);
    const balance = await ledger.balance(accountId);
    expect(balance).toBe(50);
    const entries = await ledger.entries(accountId, { limit: 1000 });
    expect(entries).toHaveLength(51);
    // No hold is open now: the entries add up to the balance alone.
    expect(sumOf(entries)).toBe(balance + 0);
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 50, balance: 50, held: 0, ok: true });
  }, 60_000);

  it('returns the credits of a process killed while holding, after the hold’s ttl', async () => {
    const ledger = new RedisCreditLedger({ client: client!, prefix: PREFIX });
    const accountId = `acct_kill${RUN_ID}`;
    await ledger.topUp(accountId, 10);
    const child = startChild(bundle!.file, { url: REDIS_URL, prefix: PREFIX, accountId, n: 3, ttlMs: 1500 }, cleanups);
    await child.next('ready');
    const heldAt = Date.now();
    child.send('go');
    expect(await child.next('done')).toMatchObject({ holdIds: expect.arrayContaining([expect.any(String)]) });
    child.process.kill('SIGKILL');
    expect(await ledger.balance(accountId)).toBe(7);
    let balance = 7;
    while (balance !== 10 && Date.now() - heldAt < 1500 + 1000) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      balance = await ledger.balance(accountId);
    }
    expect(balance).toBe(10);
    expect(await ledger.entries(accountId)).toHaveLength(1);
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 10, balance: 10, held: 0, ok: true });
  }, 30_000);
});
