import { PGlite } from '@electric-sql/pglite';
import { CreditLedgerUnavailableError, capabilityOf } from 'keygate';
import { PostgresCreditLedger } from 'keygate/postgres';
import { describeCreditLedgerContract } from 'keygate/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rejectedWith, settlesAt } from '../rate-limit/support/deadline.js';
import { rejection } from '../rate-limit/support/rejection.js';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const available = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const SCHEMA = `keygate_cl${RUN_ID}`;
const pools: pg.Pool[] = [];
let accounts = 0;
const freshAccount = (label: string) => `acct_${label}_${RUN_ID}_${++accounts}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function pool(): pg.Pool {
  const p = new pg.Pool({ connectionString: PG_URL, max: 10 });
  p.on('error', () => {});
  pools.push(p);
  return p;
}

// PGlite takes about a second to start: one in-memory database for the file, a schema per use.
let pglite: Promise<PGlite> | undefined;
const embedded = () => {
  pglite ??= PGlite.create();
  return pglite;
};
beforeAll(async () => {
  await new PostgresCreditLedger({ client: await embedded(), schema: 'credits' }).migrate();
});

afterAll(async () => {
  if (pglite) await (await pglite).close();
  if (!available) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
  await Promise.all(pools.filter((p) => !p.ended).map((p) => p.end()));
});

describeCreditLedgerContract(
  'PostgresCreditLedger over PGlite',
  async () => {
    const db = await embedded();
    return {
      ledger: new PostgresCreditLedger({ client: db, schema: 'credits', timeoutMs: 10_000 }),
      peer: new PostgresCreditLedger({ client: db, schema: 'credits', timeoutMs: 10_000 }),
    };
  },
  { describe, it, expect, beforeEach, afterEach },
);

describe('PostgresCreditLedger over PGlite', () => {
  it('rejects with credit_ledger_unavailable at its timeout when the database never answers', async () => {
    let fail: (err: Error) => void = () => {};
    // A pg Pool whose connections and queries never settle (until the test fails one, after the deadline).
    const stuck = {
      totalCount: 0,
      connect: () => new Promise((_, reject) => (fail = reject)),
      query: () => new Promise(() => {}),
    } as unknown as pg.Pool;
    const ledger = new PostgresCreditLedger({ client: stuck, timeoutMs: 50 });
    const err = rejectedWith(await settlesAt(50, () => ledger.hold('acct_1', 1)));
    expect(err).toBeInstanceOf(CreditLedgerUnavailableError);
    expect(err).toMatchObject({ code: 'credit_ledger_unavailable' });
    expect(String((err.cause as Error).message)).toMatch(/timed out after 50 ms/);
    fail(new Error('connection reset'));
    await sleep(20);
  });

  it('waits 1,000 ms by default, and declares it as its deadline capability', async () => {
    const ledger = new PostgresCreditLedger({ client: await embedded(), schema: 'credits' });
    expect(ledger.timeoutMs).toBe(1_000);
    expect(capabilityOf(ledger, 'deadline')?.timeoutMs).toBe(1_000);
  });

  it('refuses to settle more than an open hold, but a settle of more than a closed hold changes nothing', async () => {
    const ledger = new PostgresCreditLedger({ client: await embedded(), schema: 'credits' });
    const account = freshAccount('over_closed');
    await ledger.topUp(account, 10);
    const held = await ledger.hold(account, 3);
    const holdId = held.ok ? held.holdId : '';
    expect(await rejection(ledger.settle(holdId, 4))).toMatchObject({ code: 'invalid_input', field: 'amount' });
    expect(await ledger.release(holdId)).toEqual({ balance: 10 });
    expect(await ledger.settle(holdId, 4)).toEqual({ charged: 0, balance: 10 });
    expect(await ledger.entries(account)).toHaveLength(1);
  });

  it('reconciles as not ok, with the figures, once an entry was written around the ledger', async () => {
    const db = await embedded();
    const ledger = new PostgresCreditLedger({ client: db, schema: 'credits' });
    const account = freshAccount('tampered');
    await ledger.topUp(account, 10);
    await ledger.hold(account, 3);
    await db.query(
      `INSERT INTO credits.keygate_credit_entries (account_id, kind, amount, balance, created_at) VALUES ($1, 'top_up', 5, 12, now())`,
      [account],
    );
    expect(await ledger.reconcile(account)).toEqual({
      accountId: account,
      entries: 15,
      balance: 7,
      held: 3,
      ok: false,
    });
  });

  it('sums entries past 2**31 and past one page of entries exactly', async () => {
    const ledger = new PostgresCreditLedger({ client: await embedded(), schema: 'credits', timeoutMs: 10_000 });
    const account = freshAccount('big');
    await ledger.topUp(account, Number.MAX_SAFE_INTEGER - 1_200);
    for (let i = 0; i < 1_100; i++) await ledger.topUp(account, 1);
    expect(await ledger.reconcile(account)).toEqual({
      accountId: account,
      entries: Number.MAX_SAFE_INTEGER - 100,
      balance: Number.MAX_SAFE_INTEGER - 100,
      held: 0,
      ok: true,
    });
  }, 60_000);

  it('rejects with credit_ledger_unavailable, the client error as cause, once the database is closed', async () => {
    const db = await PGlite.create();
    const ledger = new PostgresCreditLedger({ client: db });
    await ledger.migrate();
    await ledger.topUp('acct_1', 5);
    await db.close();
    for (const call of [
      () => ledger.balance('acct_1'),
      () => ledger.hold('acct_1', 1),
      () => ledger.settle('hold_1'),
    ]) {
      const err = await rejection(call());
      expect(err).toBeInstanceOf(CreditLedgerUnavailableError);
      expect(err.cause).toBeInstanceOf(Error);
    }
  });
});

describe.skipIf(!available)('PostgresCreditLedger over pg', () => {
  // One pool for the contract's tests and one for its peer, as two processes would have.
  let shared: pg.Pool | undefined;
  let other: pg.Pool | undefined;
  beforeAll(async () => {
    shared = pool();
    other = pool();
    await new PostgresCreditLedger({ client: shared, schema: SCHEMA }).migrate();
  });
  const ledgerOn = (p: pg.Pool | undefined) =>
    new PostgresCreditLedger({ client: p as pg.Pool, schema: SCHEMA, timeoutMs: 10_000 });

  describeCreditLedgerContract(
    'PostgresCreditLedger over a pg Pool',
    async () => ({ ledger: ledgerOn(shared), peer: ledgerOn(other) }),
    { describe, it, expect, beforeEach, afterEach },
  );

  it('migrates idempotently, also when several instances migrate at once', async () => {
    const schema = `${SCHEMA}_m`;
    const p = pool();
    try {
      const ledgers = Array.from({ length: 4 }, () => new PostgresCreditLedger({ client: p, schema }));
      await Promise.all(ledgers.map((l) => l.migrate()));
      await ledgers[0]!.migrate();
      expect(await ledgers[1]!.topUp('acct_1', 3)).toEqual({ balance: 3 });
      const { rows } = await p.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
        [schema],
      );
      expect(rows.map((r) => r.table_name)).toEqual([
        'keygate_credit_balances',
        'keygate_credit_entries',
        'keygate_credit_holds',
      ]);
    } finally {
      await p.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  it('sends one statement per hold, settle and release (no BEGIN or COMMIT of its own)', async () => {
    const p = pool();
    // Every statement any of the pool's connections sends, BEGIN and COMMIT included.
    const sent: string[] = [];
    p.on('connect', (conn) => {
      const query = conn.query.bind(conn) as (...a: unknown[]) => unknown;
      conn.query = ((...a: unknown[]) => {
        sent.push(String(typeof a[0] === 'string' ? a[0] : (a[0] as { text?: string })?.text));
        return query(...a);
      }) as never;
    });
    const ledger = new PostgresCreditLedger({ client: p, schema: SCHEMA });
    const account = freshAccount('one_statement');
    await ledgerOn(shared).topUp(account, 10);
    const held = await ledger.hold(account, 4, { keyId: 'key_1' });
    const second = await ledger.hold(account, 3);
    expect(await ledger.settle(held.ok ? held.holdId : '', 2)).toEqual({ charged: 2, balance: 5 });
    expect(await ledger.release(second.ok ? second.holdId : '')).toEqual({ balance: 8 });
    expect(sent).toHaveLength(4);
  });

  it('upgrades a schema made before its functions: migrate() adds them and open holds settle', async () => {
    const schema = `${SCHEMA}_u`;
    const p = pool();
    try {
      const ledger = new PostgresCreditLedger({ client: p, schema, timeoutMs: 10_000 });
      await ledger.migrate();
      await ledger.topUp('acct_1', 10);
      const held = await ledger.hold('acct_1', 4, { keyId: 'key_1' });
      for (const fn of ['hold(text, bigint, text, text, bigint)', 'settle(text, bigint)', 'release(text)']) {
        await p.query(`DROP FUNCTION "${schema}".keygate_credit_${fn}`);
      }
      await p.query(`DROP FUNCTION "${schema}".keygate_credit_sweep(text, timestamptz)`);
      expect(await rejection(ledger.hold('acct_1', 1))).toMatchObject({ code: 'credit_ledger_unavailable' });
      await ledger.migrate();
      await ledger.migrate();
      expect(await ledger.settle(held.ok ? held.holdId : '')).toEqual({ charged: 4, balance: 6 });
      expect(await ledger.reconcile('acct_1')).toMatchObject({ ok: true, balance: 6, held: 0 });
    } finally {
      await p.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  it('lapses an expired hold inside the next call on its account, with no background job', async () => {
    const ledger = ledgerOn(shared);
    const account = freshAccount('sweep');
    await ledger.topUp(account, 10);
    const held = await ledger.hold(account, 4, { ttlMs: 100 });
    const state = async () =>
      (
        await shared!.query(`SELECT state FROM "${SCHEMA}".keygate_credit_holds WHERE id = $1`, [
          held.ok ? held.holdId : '',
        ])
      ).rows[0]?.state;
    await sleep(200);
    // Expired but not yet swept: balance() counts it as returned without writing anything.
    expect(await ledger.balance(account)).toBe(10);
    expect(await state()).toBe('open');
    expect(await ledger.hold(account, 10)).toMatchObject({ ok: true, balance: 0 });
    expect(await state()).toBe('lapsed');
  });

  it('keeps the sum of the entries equal to the stored balance plus the open holds', async () => {
    const ledger = ledgerOn(shared);
    const account = freshAccount('invariant');
    await ledger.topUp(account, 50);
    const holds = await Promise.all(Array.from({ length: 6 }, () => ledger.hold(account, 5)));
    await ledger.settle(holds[0]!.ok ? holds[0]!.holdId : '', 2);
    await ledger.release(holds[1]!.ok ? holds[1]!.holdId : '');
    const { rows } = await shared!.query(
      `SELECT
        (SELECT sum(amount) FROM "${SCHEMA}".keygate_credit_entries WHERE account_id = $1) AS entries,
        (SELECT available FROM "${SCHEMA}".keygate_credit_balances WHERE account_id = $1) AS available,
        (SELECT sum(amount) FROM "${SCHEMA}".keygate_credit_holds WHERE account_id = $1 AND state = 'open') AS open`,
      [account],
    );
    expect(rows[0]).toEqual({ entries: '48', available: '28', open: '20' });
  });

  it('rejects with credit_ledger_unavailable once its pool has ended', async () => {
    const p = pool();
    const ledger = new PostgresCreditLedger({ client: p, schema: SCHEMA });
    await p.end();
    const err = await rejection(ledger.topUp(freshAccount('ended'), 1));
    expect(err).toMatchObject({ code: 'credit_ledger_unavailable' });
    expect(err.cause).toBeInstanceOf(Error);
  });

  it.each([
    ['client', { client: {} }],
    ['schema', { client: 'pool', schema: 'Credits' }],
    ['timeoutMs', { client: 'pool', timeoutMs: 0 }],
  ])('refuses a bad %s option at construction', (field, options) => {
    const withPool = options.client === 'pool' ? { ...options, client: pool() } : options;
    expect(() => new PostgresCreditLedger(withPool as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});
