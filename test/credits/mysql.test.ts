import { capabilityOf } from 'keygate';
import { MysqlCreditLedger } from 'keygate/mysql';
import { describeCreditLedgerContract } from 'keygate/testing';
import type mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rejection } from '../rate-limit/support/rejection.js';
import { mysqlAvailable, openTestDatabase, stuckPool, type TestDatabase } from '../stores/support/mysql.js';
import { RUN_ID } from '../stores/support/services.js';

const available = await mysqlAvailable();
let db: TestDatabase;
// One pool for the contract's tests and one for its peer, as two processes would have.
let shared: mysql.Pool;
let other: mysql.Pool;
let accounts = 0;
const freshAccount = (label: string) => `acct_${label}_${RUN_ID}_${++accounts}`;
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
  it('waits 1,000 ms by default, and declares it as its deadline capability', () => {
    const ledger = new MysqlCreditLedger({ client: { pool: {}, query() {}, getConnection() {} } as never });
    expect(ledger.timeoutMs).toBe(1_000);
    expect(capabilityOf(ledger, 'deadline')?.timeoutMs).toBe(1_000);
  });

  it('prunes by itself the holds closed a day ago by default; null or 0 turns that off', () => {
    const client = { pool: {}, query() {}, getConnection() {} } as never;
    expect(new MysqlCreditLedger({ client }).pruneHoldsAfterMs).toBe(86_400_000);
    for (const off of [null, 0])
      expect(new MysqlCreditLedger({ client, pruneHoldsAfterMs: off }).pruneHoldsAfterMs).toBe(null);
  });

  it.each([
    [-1, 'out_of_range'],
    [Number.NaN, 'out_of_range'],
  ])('refuses a pruneHoldsAfterMs of %j (%s) at construction', (value, reason) => {
    const client = { pool: {}, query() {}, getConnection() {} } as never;
    expect(() => new MysqlCreditLedger({ client, pruneHoldsAfterMs: value })).toThrow(
      expect.objectContaining({
        code: 'invalid_input',
        field: 'pruneHoldsAfterMs',
        issues: [expect.objectContaining({ reason })],
      }),
    );
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
  const figuresSql = `SELECT
    (SELECT sum(amount) FROM keygate_credit_entries WHERE account_id = ?) AS entries,
    (SELECT available FROM keygate_credit_balances WHERE account_id = ?) AS available,
    (SELECT sum(amount) FROM keygate_credit_holds WHERE account_id = ? AND state = 'open') AS open`;
  let migrations = 0;

  describeCreditLedgerContract(
    'MysqlCreditLedger over a mysql2 pool',
    async () => ({
      ledger: ledgerOn(shared),
      peer: ledgerOn(other),
      writeAround: async (accountId, amount) => {
        await shared.query(
          `INSERT INTO keygate_credit_entries (account_id, kind, amount, balance, created_at) VALUES (?, 'top_up', ?, 0, UTC_TIMESTAMP(3))`,
          [accountId, amount],
        );
      },
      holdState: async (holdId) => {
        const [rows] = await shared.query('SELECT state FROM keygate_credit_holds WHERE id = ?', [holdId]);
        return (rows as { state: string }[])[0]?.state;
      },
      storedFigures: async (accountId) => {
        const [rows] = await shared.query(figuresSql, [accountId, accountId, accountId]);
        const row = (rows as Record<string, unknown>[])[0] ?? {};
        return { entries: Number(row.entries), available: Number(row.available), open: Number(row.open) };
      },
      pruning: (pruneHoldsAfterMs) => new MysqlCreditLedger({ client: other, timeoutMs: 10_000, pruneHoldsAfterMs }),
      stalled: (timeoutMs) => {
        const { pool, unstick } = stuckPool();
        return { ledger: new MysqlCreditLedger({ client: pool, timeoutMs }), unstick };
      },
      ended: async () => {
        const p = db.pool();
        const ledger = new MysqlCreditLedger({ client: p });
        await ledger.balance('acct_1');
        await p.end();
        return ledger;
      },
      unmigrated: async (count) => {
        const p = db.pool();
        const tablePrefix = `m${++migrations}_`;
        return { ledgers: Array.from({ length: count }, () => new MysqlCreditLedger({ client: p, tablePrefix })) };
      },
    }),
    { describe, it, expect, beforeEach, afterEach },
    { hooks: ['writeAround', 'holdState', 'pruning', 'storedFigures', 'stalled', 'ended', 'unmigrated'] },
  );

  it('sends one CALL per hold, settle and release (no transaction statements of its own)', async () => {
    const p = db.pool();
    const sent: string[] = [];
    const query = p.query.bind(p) as (...a: unknown[]) => unknown;
    p.query = ((...a: unknown[]) => {
      sent.push(String((a[0] as { sql?: string })?.sql ?? a[0]));
      return query(...a);
    }) as never;
    p.getConnection = (() => Promise.reject(new Error('a hold, settle or release checked a connection out'))) as never;
    // Without its own background prune, which is no statement of a hold's.
    const ledger = new MysqlCreditLedger({ client: p, timeoutMs: 10_000, pruneHoldsAfterMs: null });
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

  it('upgrades a holds table made before the index prune reads: migrate() adds it once', async () => {
    const p = db.pool();
    const ledger = new MysqlCreditLedger({ client: p, tablePrefix: 'ix_', timeoutMs: 10_000 });
    const indexes = async () => {
      const [rows] = await p.query(
        `SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS
          WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ix_credit_holds' AND INDEX_NAME = 'credit_holds_closed'`,
      );
      return (rows as { name: string }[]).map((r) => r.name);
    };
    await ledger.migrate();
    await p.query('ALTER TABLE ix_credit_holds DROP INDEX credit_holds_closed');
    expect(await indexes()).toEqual([]);
    await Promise.all([ledger.migrate(), ledger.migrate()]);
    await ledger.migrate();
    expect(await indexes()).toEqual(['credit_holds_closed']);
    await ledger.topUp('acct_1', 10);
    const held = await ledger.hold('acct_1', 4);
    await ledger.settle(held.ok ? held.holdId : '');
    expect(await ledger.prune({ olderThanMs: 0 })).toEqual({ deleted: 1 });
  });
});
