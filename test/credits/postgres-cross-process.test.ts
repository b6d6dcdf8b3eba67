import { join } from 'node:path';
import { PostgresCreditLedger } from 'keygate/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild, type ChildBundle, startChild } from '../stores/support/child-process.js';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const available = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const SCHEMA = `keygate_clx${RUN_ID}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Children run the TypeScript sources, bundled by esbuild (see stores/support/child-process.ts).
const cleanups: (() => Promise<unknown>)[] = [];
let bundle: ChildBundle | undefined;
let pool: pg.Pool;
let ledger: PostgresCreditLedger;

beforeAll(async () => {
  if (!available) return;
  bundle = await bundleChild(join(import.meta.dirname, 'support/postgres-hold-child.ts'));
  pool = new pg.Pool({ connectionString: PG_URL });
  ledger = new PostgresCreditLedger({ client: pool, schema: SCHEMA, timeoutMs: 10_000 });
  await ledger.migrate();
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await bundle?.remove();
  if (!available) return;
  await pool.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await pool.end();
});

/** The sum of the account's entries, its available balance and the sum of its open (unexpired) holds. */
async function books(accountId: string): Promise<{ entries: number; balance: number; open: number }> {
  const { rows } = await pool.query(
    `SELECT
      (SELECT coalesce(sum(amount), 0) FROM "${SCHEMA}".keygate_credit_entries WHERE account_id = $1) AS entries,
      (SELECT coalesce(sum(amount), 0) FROM "${SCHEMA}".keygate_credit_holds WHERE account_id = $1 AND state = 'open' AND expires_at > now()) AS open`,
    [accountId],
  );
  return { entries: Number(rows[0].entries), balance: await ledger.balance(accountId), open: Number(rows[0].open) };
}

describe.skipIf(!available)('credits across processes', () => {
  it('3 processes x 50 concurrent holds of 1 against a balance of 100 hold exactly 100; after settling half and releasing half the entries add up to the balance plus the open holds', async () => {
    const accountId = `acct_x${RUN_ID}`;
    await ledger.topUp(accountId, 100);
    const children = Array.from({ length: 3 }, () =>
      startChild(bundle!.file, { url: PG_URL, schema: SCHEMA, accountId, n: 50 }, cleanups),
    );
    await Promise.all(children.map((c) => c.next('ready')));
    for (const c of children) c.send('go');
    const held = (await Promise.all(children.map((c) => c.next('held')))).map((e) => e.holdIds as string[]);
    expect(held.flat()).toHaveLength(100);
    expect(new Set(held.flat()).size).toBe(100);
    expect(await books(accountId)).toEqual({ entries: 100, balance: 0, open: 100 });
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 100, balance: 0, held: 100, ok: true });

    // Each process settles half of its holds and releases the other half (one extra settle where odd).
    for (const [i, c] of children.entries()) {
      const ids = held[i] ?? [];
      const half = Math.ceil(ids.length / 2);
      c.send(JSON.stringify({ settle: ids.slice(0, half), release: ids.slice(half) }));
    }
    const charged = (await Promise.all(children.map((c) => c.next('closed')))).map((e) => e.charged as number);
    const settled = charged.reduce((sum, n) => sum + n, 0);
    expect(settled).toBe(held.reduce((sum, ids) => sum + Math.ceil(ids.length / 2), 0));
    const after = await books(accountId);
    expect(after).toEqual({ entries: 100 - settled, balance: 100 - settled, open: 0 });
    expect(after.entries).toBe(after.balance + after.open);
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
    const child = startChild(bundle!.file, { url: PG_URL, schema: SCHEMA, accountId, n: 10, ttlMs: 2_000 }, cleanups);
    await child.next('ready');
    const heldAt = Date.now();
    child.send('go');
    expect((await child.next('held')).holdIds).toHaveLength(10);
    child.process.kill('SIGKILL');
    expect(await ledger.balance(accountId)).toBe(0);
    let balance = 0;
    while (balance !== 10 && Date.now() - heldAt < 2_000 + 1_000) {
      await sleep(25);
      balance = await ledger.balance(accountId);
    }
    expect(balance).toBe(10);
    expect(await books(accountId)).toEqual({ entries: 10, balance: 10, open: 0 });
    expect(await ledger.reconcile(accountId)).toEqual({ accountId, entries: 10, balance: 10, held: 0, ok: true });
    // The next call on the account lapses them in its tables, and the credits can be held again.
    expect(await ledger.hold(accountId, 10)).toMatchObject({ ok: true, balance: 0 });
    expect(await books(accountId)).toEqual({ entries: 10, balance: 0, open: 10 });
  }, 60_000);
});
