// Processes sharing one MariaDB database through keygate/mysql: a revocation reaches a warm cache in
// another process through the polled change table; three processes never exceed a rate limit nor
// overdraw an account, directly or through `authenticate`; a killed process's holds lapse.
import { join } from 'node:path';
import { KeyManager, MemoryKeyStore } from 'keygate';
import { MysqlCreditLedger, MysqlKeyStore, MysqlRateLimiter } from 'keygate/mysql';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from './support/child-process.js';
import { mysqlAvailable, openTestDatabase, type TestDatabase } from './support/mysql.js';
import { RUN_ID } from './support/services.js';

const available = await mysqlAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let bundle: ChildBundle | undefined;
let db: TestDatabase;
let pool: mysql.Pool;
let ledger: MysqlCreditLedger;

beforeAll(async () => {
  if (!available) return;
  bundle = await bundleChild(join(import.meta.dirname, 'support/mysql-child.ts'));
  db = await openTestDatabase('xp');
  pool = db.pool();
  await new MysqlKeyStore({ client: pool }).migrate();
  await new MysqlRateLimiter({ client: pool }).migrate();
  ledger = new MysqlCreditLedger({ client: pool, timeoutMs: 10_000 });
  await ledger.migrate();
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
  await db?.drop();
});

const child = (args: Record<string, unknown>) =>
  startChild(bundle!.file, { url: db.url, tablePrefix: 'keygate_', ...args }, cleanups);

/** The sum of the account's entries and of its open (unexpired) holds, read in the database, and its balance. */
async function books(accountId: string): Promise<{ entries: number; balance: number; open: number }> {
  const [rows] = await pool.query(
    `SELECT
      (SELECT COALESCE(SUM(amount), 0) FROM keygate_credit_entries WHERE account_id = ?) AS entries,
      (SELECT COALESCE(SUM(amount), 0) FROM keygate_credit_holds
        WHERE account_id = ? AND state = 'open' AND expires_at > UTC_TIMESTAMP(3)) AS open`,
    [accountId, accountId],
  );
  const row = (rows as Record<string, unknown>[])[0]!;
  return { entries: Number(row.entries), balance: await ledger.balance(accountId), open: Number(row.open) };
}

describe.skipIf(!available)('keygate/mysql across processes', () => {
  it('a key revoked in process B is refused by a warm CachedKeyStore in process A within 1 s', async () => {
    const keys = new KeyManager({ store: new MysqlKeyStore({ client: pool }) });
    const { secret, key } = await keys.create({ accountId: 'acct_x', name: 'victim', mode: 'live' });
    const probe = await keys.create({ accountId: 'acct_x', name: 'probe', mode: 'test' });
    const a = child({ role: 'watch', secret });
    await a.next('ready');
    // The watcher's poller is running once it delivers a change made here.
    const live = a.next('channel');
    let probing = true;
    live.then(() => (probing = false));
    for (let i = 0; probing && i < 100; i++) {
      await keys.update(probe.key.id, { name: `probe ${i}` });
      await sleep(100);
    }
    await live;

    const revoked = await child({ role: 'revoke', id: key.id }).next('revoked');
    const refused = await a.next('refused');
    // Measured from the start of B's revoke call (connection set-up included), so it is an upper bound.
    const delay = Number(refused.at) - Number(revoked.startedAt);
    console.log(
      `revocation delay (mysql, pollIntervalMs 500): ${delay.toFixed(1)} ms from the revoke call in process B to the first refusal in process A`,
    );
    expect(refused.code).toBe('revoked_api_key');
    expect(delay).toBeLessThan(1000);
  }, 60_000);

  it('3 processes x 100 concurrent requests against a limit of 150 allow exactly 150', async () => {
    const keyId = `key_x${RUN_ID}`;
    const children = Array.from({ length: 3 }, () => child({ role: 'consume', keyId, limit: 150, n: 100 }));
    await Promise.all(children.map((c) => c.next('ready')));
    for (const c of children) c.send('go');
    const results = await Promise.all(children.map((c) => c.next('done')));
    expect(results.reduce((sum, r) => sum + Number(r.allowed), 0)).toBe(150);
    // Every allowed request, whichever process sent it, left a different count behind: 149 down to 0.
    const remaining = results.flatMap((r) => r.remaining as number[]).sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: 150 }, (_, i) => i));
  }, 60_000);

  it('3 processes x 50 concurrent holds of 1 against a balance of 100 hold exactly 100; after settling half and releasing half the books reconcile', async () => {
    const accountId = `acct_h${RUN_ID}`;
    await ledger.topUp(accountId, 100);
    const children = Array.from({ length: 3 }, () => child({ role: 'hold', accountId, n: 50 }));
    await Promise.all(children.map((c) => c.next('ready')));
    for (const c of children) c.send('go');
    const held = (await Promise.all(children.map((c) => c.next('held')))).map((e) => e.holdIds as string[]);
    expect(held.flat()).toHaveLength(100);
    expect(new Set(held.flat()).size).toBe(100);
    expect(await books(accountId)).toEqual({ entries: 100, balance: 0, open: 100 });
    for (const [i, c] of children.entries()) {
      const ids = held[i] ?? [];
      const half = Math.ceil(ids.length / 2);
      c.send(JSON.stringify({ settle: ids.slice(0, half), release: ids.slice(half) }));
    }
    const settled = (await Promise.all(children.map((c) => c.next('closed')))).reduce(
      (sum, e) => sum + Number(e.charged),
      0,
    );
    expect(settled).toBe(held.reduce((sum, ids) => sum + Math.ceil(ids.length / 2), 0));
    expect(await books(accountId)).toEqual({ entries: 100 - settled, balance: 100 - settled, open: 0 });
    expect(await ledger.reconcile(accountId)).toEqual({
      accountId,
      entries: 100 - settled,
      balance: 100 - settled,
      held: 0,
      ok: true,
    });
    expect(await ledger.entries(accountId, { limit: 1_000 })).toHaveLength(1 + settled);
  }, 60_000);

  it("returns the credits of a process killed while holding once its holds' ttl ends", async () => {
    const accountId = `acct_k${RUN_ID}`;
    await ledger.topUp(accountId, 10);
    const c = child({ role: 'hold', accountId, n: 10, ttlMs: 2_000 });
    await c.next('ready');
    const heldAt = Date.now();
    c.send('go');
    expect((await c.next('held')).holdIds).toHaveLength(10);
    c.process.kill('SIGKILL');
    expect(await ledger.balance(accountId)).toBe(0);
    let balance = 0;
    while (balance !== 10 && Date.now() - heldAt < 2_000 + 1_000) {
      await sleep(25);
      balance = await ledger.balance(accountId);
    }
    expect(balance).toBe(10);
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 10, balance: 10, held: 0, ok: true });
    // The next call on the account lapses them in its tables, and the credits can be held again.
    expect(await ledger.hold(accountId, 10)).toMatchObject({ ok: true, balance: 0 });
    expect(await books(accountId)).toEqual({ entries: 10, balance: 0, open: 10 });
  }, 60_000);

  it('3 processes x 10 concurrent requests of cost 1 through authenticate against 10 credits: 10 served and settled, 20 refused 402, the books reconcile', async () => {
    const accountId = `acct_a${RUN_ID}`;
    const { secret } = await new KeyManager({ store: new MemoryKeyStore() }).create({
      accountId,
      name: 'shared',
      mode: 'live',
    });
    await ledger.topUp(accountId, 10, { reference: 'pay_1' });
    const children = Array.from({ length: 3 }, () => child({ role: 'bill', accountId, secret, n: 10 }));
    await Promise.all(children.map((c) => c.next('ready')));
    for (const c of children) c.send('go');
    const statuses = (await Promise.all(children.map((c) => c.next('done')))).flatMap((d) => d.statuses as string[]);
    expect(statuses.filter((s) => s === 'settled')).toHaveLength(10);
    expect(statuses.filter((s) => s === 'insufficient_credits')).toHaveLength(20);
    expect(statuses).toHaveLength(30);
    const charges = (await ledger.entries(accountId, { limit: 1_000 })).filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(10);
    expect(charges.every((e) => e.amount === -1 && typeof e.keyId === 'string')).toBe(true);
    expect(await books(accountId)).toEqual({ entries: 0, balance: 0, open: 0 });
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 0, balance: 0, held: 0, ok: true });
  }, 60_000);
});
