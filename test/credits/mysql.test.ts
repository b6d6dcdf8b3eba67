import { CreditLedgerUnavailableError, capabilityOf } from 'keygate';
import { MysqlCreditLedger } from 'keygate/mysql';
import { describeCreditLedgerContract } from 'keygate/testing';
import type mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rejectedWith, settlesAt } from '../rate-limit/support/deadline.js';
import { rejection } from '../rate-limit/support/rejection.js';
import { mysqlAvailable, openTestDatabase, type TestDatabase } from '../stores/support/mysql.js';
import { RUN_ID } from '../stores/support/services.js';

const available = await mysqlAvailable();
let db: TestDatabase;
// One pool for the contract's tests and one for its peer, as two processes would have.
let shared: mysql.Pool;
let other: mysql.Pool;
let accounts = 0;
const freshAccount = (label: string) => `acct_${label}_${RUN_ID}_${++accounts}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ledgerOn = (p: mysql.Pool) => new MysqlCreditLedger({ client: p, timeoutMs: 10_000 });

beforeAll(async () => {
  if (!available) return;
  db = await openTestDatabase('cl');
  shared = db.pool();
  other = db.pool();
  await new MysqlCreditLedger({ client: shared }).migrate();
});
afterAll(async () => {
  await db?.drop();
});

describe('MysqlCreditLedger without a server', () => {
  it('rejects with credit_ledger_unavailable at its timeout when the database never answers', async () => {
    let fail: (err: Error) => void = () => {};
    const stuck = {
      pool: {},
      query: () => new Promise(() => {}),
      getConnection: () => new Promise((_, reject) => (fail = reject)),
    } as unknown as mysql.Pool;
    const ledger = new MysqlCreditLedger({ client: stuck, timeoutMs: 50 });
    const err = rejectedWith(await settlesAt(50, () => ledger.hold('acct_1', 1)));
    expect(err).toBeInstanceOf(CreditLedgerUnavailableError);
    expect(err).toMatchObject({ code: 'credit_ledger_unavailable' });
    expect(String((err.cause as Error).message)).toMatch(/timed out after 50 ms/);
    fail(new Error('connection reset'));
    await sleep(20);
  });

  it('waits 1,000 ms by default, and declares it as its deadline capability', () => {
    const ledger = new MysqlCreditLedger({ client: { pool: {}, query() {}, getConnection() {} } as never });
    expect(ledger.timeoutMs).toBe(1_000);
    expect(capabilityOf(ledger, 'deadline')?.timeoutMs).toBe(1_000);
  });

  it.each([
    ['client', { client: {} }],
    ['tablePrefix', { client: 'pool', tablePrefix: 'Credits' }],
    ['timeoutMs', { client: 'pool', timeoutMs: 0 }],
  ])('refuses a bad %s option at construction', (field, options) => {
    const pool = { pool: {}, query() {}, getConnection() {} };
    const withPool = options.client === 'pool' ? { ...options, client: pool } : options;
    expect(() => new MysqlCreditLedger(withPool as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});

describe.skipIf(!available)('MysqlCreditLedger over MariaDB', () => {
  describeCreditLedgerContract(
    'MysqlCreditLedger over a mysql2 pool',
    async () => ({ ledger: ledgerOn(shared), peer: ledgerOn(other) }),
    { describe, it, expect, beforeEach, afterEach },
  );

  it('migrates idempotently, also when several instances migrate at once', async () => {
    const p = db.pool();
    const ledgers = Array.from({ length: 4 }, () => new MysqlCreditLedger({ client: p, tablePrefix: 'm_' }));
    await Promise.all(ledgers.map((l) => l.migrate()));
    await ledgers[0]!.migrate();
    expect(await ledgers[1]!.topUp('acct_1', 3)).toEqual({ balance: 3 });
    const [rows] = await p.query(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'm\\_%' ORDER BY table_name`,
    );
    expect((rows as { name: string }[]).map((r) => r.name)).toEqual([
      'm_credit_balances',
      'm_credit_entries',
      'm_credit_holds',
    ]);
  });

  it('sends one CALL per hold, settle and release (no transaction statements of its own)', async () => {
    const p = db.pool();
    const sent: string[] = [];
    const query = p.query.bind(p) as (...a: unknown[]) => unknown;
    p.query = ((...a: unknown[]) => {
      sent.push(String((a[0] as { sql?: string })?.sql ?? a[0]));
      return query(...a);
    }) as never;
    p.getConnection = (() => Promise.reject(new Error('a hold, settle or release checked a connection out'))) as never;
    const ledger = ledgerOn(p);
    const account = freshAccount('one_call');
    await ledgerOn(shared).topUp(account, 10);
    const held = await ledger.hold(account, 4, { keyId: 'key_1' });
    const second = await ledger.hold(account, 3);
    expect(await ledger.settle(held.ok ? held.holdId : '', 2)).toEqual({ charged: 2, balance: 5 });
    expect(await ledger.release(second.ok ? second.holdId : '')).toEqual({ balance: 8 });
    expect(sent.map((s) => s.split('(')[0])).toEqual([
      'CALL keygate_credit_hold_v1',
      'CALL keygate_credit_hold_v1',
      'CALL keygate_credit_settle_v1',
      'CALL keygate_credit_release_v1',
    ]);
    expect((await ledgerOn(shared).entries(account, { limit: 1 }))[0]).toMatchObject({ amount: -2, keyId: 'key_1' });
  });

  it('upgrades tables made before its procedures: migrate() adds them and open holds settle', async () => {
    const p = db.pool();
    const ledger = new MysqlCreditLedger({ client: p, tablePrefix: 'u_', timeoutMs: 10_000 });
    await ledger.migrate();
    await ledger.topUp('acct_1', 10);
    const held = await ledger.hold('acct_1', 4, { keyId: 'key_1' });
    for (const name of ['sweep', 'hold', 'settle', 'release']) await p.query(`DROP PROCEDURE u_credit_${name}_v1`);
    expect(await rejection(ledger.hold('acct_1', 1))).toMatchObject({ code: 'credit_ledger_unavailable' });
    await Promise.all([ledger.migrate(), ledger.migrate()]);
    await ledger.migrate();
    expect(await ledger.settle(held.ok ? held.holdId : '')).toEqual({ charged: 4, balance: 6 });
    expect(await ledger.reconcile('acct_1')).toMatchObject({ ok: true, balance: 6, held: 0 });
  });

  it('refuses to settle more than an open hold, but a settle of more than a closed hold changes nothing', async () => {
    const ledger = ledgerOn(shared);
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
    const ledger = ledgerOn(shared);
    const account = freshAccount('tampered');
    await ledger.topUp(account, 10);
    await ledger.hold(account, 3);
    await shared.query(
      `INSERT INTO keygate_credit_entries (account_id, kind, amount, balance, created_at) VALUES (?, 'top_up', 5, 12, UTC_TIMESTAMP(3))`,
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
    const ledger = ledgerOn(shared);
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

  it('lapses an expired hold inside the next call on its account, with no background job', async () => {
    const ledger = ledgerOn(shared);
    const account = freshAccount('sweep');
    await ledger.topUp(account, 10);
    const held = await ledger.hold(account, 4, { ttlMs: 100 });
    const state = async () => {
      const [rows] = await shared.query('SELECT state FROM keygate_credit_holds WHERE id = ?', [
        held.ok ? held.holdId : '',
      ]);
      return (rows as { state: string }[])[0]?.state;
    };
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
    const [rows] = await shared.query(
      `SELECT
        (SELECT sum(amount) FROM keygate_credit_entries WHERE account_id = ?) AS entries,
        (SELECT available FROM keygate_credit_balances WHERE account_id = ?) AS available,
        (SELECT sum(amount) FROM keygate_credit_holds WHERE account_id = ? AND state = 'open') AS open`,
      [account, account, account],
    );
    const row = (rows as Record<string, unknown>[])[0]!;
    expect({ entries: Number(row.entries), available: Number(row.available), open: Number(row.open) }).toEqual({
      entries: 48,
      available: 28,
      open: 20,
    });
  });

  it('rejects with credit_ledger_unavailable, the client error as cause, once its pool has ended', async () => {
    const p = db.pool();
    const ledger = new MysqlCreditLedger({ client: p });
    await p.end();
    for (const call of [
      () => ledger.topUp(freshAccount('ended'), 1),
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
