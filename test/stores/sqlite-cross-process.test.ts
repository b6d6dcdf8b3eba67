// Several processes on one SQLite file: a revocation reaches a warm cache in another process within
// 1 s (the change table, polled), and limits, holds and billing stay exact across three processes.
import { join } from 'node:path';
import { type CreditEntry, KeyManager, MemoryKeyStore } from 'keygate';
import { SqliteCreditLedger, SqliteKeyStore, SqliteRateLimiter } from 'keygate/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from './support/child-process.js';
import { SqliteFiles } from './support/sqlite-files.js';

const files = new SqliteFiles();
const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  bundle = await bundleChild(join(import.meta.dirname, 'support/sqlite-child.ts'));
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
  files.removeAll();
});

const child = (args: Record<string, unknown>) => startChild(bundle!.file, args, cleanups);

describe('several processes on one SQLite file', () => {
  it('a key revoked in process B is refused by a warm CachedKeyStore in process A within 1 s', async () => {
    const path = files.path();
    const store = new SqliteKeyStore({ database: files.connect(path) });
    await store.migrate();
    const keys = new KeyManager({ store });
    const { secret, key } = await keys.create({ accountId: 'acct_x', name: 'victim', mode: 'live' });
    const probe = await keys.create({ accountId: 'acct_x', name: 'probe', mode: 'test' });

    const a = child({ role: 'watch', path, secret });
    await a.next('ready');
    // A's poller is live once it has seen a change made here.
    const live = a.next('channel');
    let probing = true;
    live.then(() => {
      probing = false;
    });
    for (let i = 0; probing && i < 100; i++) {
      await keys.update(probe.key.id, { name: `probe ${i}` });
      await sleep(100);
    }
    await live;

    const revoked = await child({ role: 'revoke', path, id: key.id }).next('revoked');
    const refused = await a.next('refused');
    // Measured from the start of B's revoke call (its start-up not included), so it is an upper bound.
    const delay = Number(refused.at) - Number(revoked.startedAt);
    console.log(`revocation delay (sqlite, pollIntervalMs 250): ${delay.toFixed(1)} ms`);
    expect(refused.code).toBe('revoked_api_key');
    expect(delay).toBeLessThan(1000);
  }, 60_000);

  it('3 processes x 100 concurrent requests against a limit of 150 allow exactly 150', async () => {
    const path = files.path();
    await new SqliteRateLimiter({ database: files.connect(path) }).migrate();
    const common = { role: 'consume', path, keyId: 'key_x', limit: 150, windowMs: 60_000, n: 100 };
    const children = Array.from({ length: 3 }, () => child(common));
    await Promise.all(children.map((c) => c.next('ready')));
    for (const c of children) c.send('go');
    const results = await Promise.all(children.map((c) => c.next('done')));
    expect(results.reduce((n, r) => n + (r.allowed as number), 0)).toBe(150);
    // Every allowed request, whichever process sent it, left a different count behind: 149 down to 0.
    const remaining = results.flatMap((r) => r.remaining as number[]).sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: 150 }, (_, i) => i));
  }, 60_000);

  it('3 processes x 50 concurrent holds of 1 against 100 credits hold exactly 100; after settling half and releasing half the books reconcile', async () => {
    const path = files.path();
    const ledger = new SqliteCreditLedger({ database: files.connect(path), timeoutMs: 10_000 });
    await ledger.migrate();
    const accountId = 'acct_h';
    await ledger.topUp(accountId, 100);
    const children = Array.from({ length: 3 }, () => child({ role: 'hold', path, accountId, n: 50 }));
    await Promise.all(children.map((c) => c.next('ready')));
    for (const c of children) c.send('go');
    const held = (await Promise.all(children.map((c) => c.next('held')))).map((e) => e.holdIds as string[]);
    expect(new Set(held.flat()).size).toBe(100);
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 100, balance: 0, held: 100, ok: true });

    for (const [i, c] of children.entries()) {
      const ids = held[i] ?? [];
      const half = Math.ceil(ids.length / 2);
      c.send(JSON.stringify({ settle: ids.slice(0, half), release: ids.slice(half) }));
    }
    const charged = (await Promise.all(children.map((c) => c.next('closed')))).reduce(
      (sum, e) => sum + (e.charged as number),
      0,
    );
    expect(charged).toBe(held.reduce((sum, ids) => sum + Math.ceil(ids.length / 2), 0));
    expect(await ledger.reconcile(accountId)).toEqual({
      accountId,
      entries: 100 - charged,
      balance: 100 - charged,
      held: 0,
      ok: true,
    });
    expect(await ledger.entries(accountId, { limit: 1_000 })).toHaveLength(1 + charged);
  }, 60_000);

  it("returns the credits of a process killed while holding once its holds' ttl ends", async () => {
    const path = files.path();
    const ledger = new SqliteCreditLedger({ database: files.connect(path) });
    await ledger.migrate();
    const accountId = 'acct_k';
    await ledger.topUp(accountId, 10);
    const c = child({ role: 'hold', path, accountId, n: 10, ttlMs: 2_000 });
    await c.next('ready');
    const heldAt = Date.now();
    c.send('go');
    expect((await c.next('held')).holdIds).toHaveLength(10);
    c.process.kill('SIGKILL');
    expect(await ledger.balance(accountId)).toBe(0);
    let balance = 0;
    while (balance !== 10 && Date.now() - heldAt < 3_000) {
      await sleep(25);
      balance = await ledger.balance(accountId);
    }
    expect(balance).toBe(10);
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 10, balance: 10, held: 0, ok: true });
    expect(await ledger.hold(accountId, 10)).toMatchObject({ ok: true, balance: 0 });
  }, 60_000);

  it('3 processes x 10 concurrent requests of cost 1 through authenticate against 10 credits: 10 served and settled, 20 refused 402, the books reconcile', async () => {
    const path = files.path();
    const ledger = new SqliteCreditLedger({ database: files.connect(path), timeoutMs: 10_000 });
    await ledger.migrate();
    const accountId = 'acct_a';
    const { secret } = await new KeyManager({ store: new MemoryKeyStore() }).create({
      accountId,
      name: 'shared',
      mode: 'live',
    });
    await ledger.topUp(accountId, 10, { reference: 'pay_1' });
    const children = Array.from({ length: 3 }, () => child({ role: 'bill', path, accountId, secret, n: 10 }));
    await Promise.all(children.map((c) => c.next('ready')));
    for (const c of children) c.send('go');
    const statuses = (await Promise.all(children.map((c) => c.next('done')))).flatMap((d) => d.statuses as string[]);
    expect(statuses.filter((s) => s === 'settled')).toHaveLength(10);
    expect(statuses.filter((s) => s === 'insufficient_credits')).toHaveLength(20);
    const entries: CreditEntry[] = await ledger.entries(accountId, { limit: 1_000 });
    const charges = entries.filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(10);
    expect(charges.every((e) => e.amount === -1 && typeof e.keyId === 'string')).toBe(true);
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 0, balance: 0, held: 0, ok: true });
  }, 60_000);
});
