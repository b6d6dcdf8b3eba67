import { authenticate, CreditLedgerUnavailableError, capabilityOf, KeyManager, MemoryKeyStore } from 'keygate';
import { finishCredits } from 'keygate/adapter-kit';
import { SqliteCreditLedger } from 'keygate/sqlite';
import { describeCreditLedgerContract } from 'keygate/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rejection } from '../rate-limit/support/rejection.js';
import { reopenable, SqliteFiles } from '../stores/support/sqlite-files.js';

const files = new SqliteFiles();
let path: string;
let accounts = 0;
const freshAccount = (label: string) => `acct_${label}_${++accounts}`;

beforeAll(async () => {
  path = files.path();
  await new SqliteCreditLedger({ database: files.connect(path) }).migrate();
});
afterAll(() => files.removeAll());

const ledgerOn = () => new SqliteCreditLedger({ database: files.connect(path), timeoutMs: 10_000 });

// Two connections to one file, as two processes would hold it; concurrent calls are spread over both.
describeCreditLedgerContract(
  'SqliteCreditLedger over better-sqlite3 (a file, two connections)',
  async () => {
    const db = files.connect(path);
    return {
      ledger: ledgerOn(),
      peer: ledgerOn(),
      writeAround: async (accountId, amount) => {
        db.prepare(
          `INSERT INTO keygate_credit_entries (account_id, kind, amount, balance, created_at) VALUES (?, 'top_up', ?, 0, '2026-01-01T00:00:00.000Z')`,
        ).run(accountId, amount);
      },
      holdState: async (holdId) =>
        (db.prepare('SELECT state FROM keygate_credit_holds WHERE id = ?').get(holdId) as { state: string } | undefined)
          ?.state,
      pruning: (pruneHoldsAfterMs) =>
        new SqliteCreditLedger({ database: files.connect(path), timeoutMs: 10_000, pruneHoldsAfterMs }),
      ended: async () => {
        const conn = reopenable(files, path);
        const ledger = new SqliteCreditLedger({ database: conn.driver });
        await ledger.balance('acct_1');
        conn.close();
        return ledger;
      },
      unmigrated: async (count) => {
        const fresh = files.path();
        return {
          ledgers: Array.from({ length: count }, () => new SqliteCreditLedger({ database: files.connect(fresh) })),
        };
      },
    };
  },
  { describe, it, expect, beforeEach, afterEach },
  { hooks: ['writeAround', 'holdState', 'pruning', 'ended', 'unmigrated'] },
);

describe('SqliteCreditLedger', () => {
  it('offers the synchronous capability: holds, settles and releases with the same transactions', () => {
    const ledger = ledgerOn();
    const sync = capabilityOf(ledger, 'synchronous');
    expect(capabilityOf(ledger, 'deadline')?.timeoutMs).toBe(10_000);
    const account = freshAccount('sync');
    const peer = ledgerOn();
    return peer.topUp(account, 5).then(async () => {
      const a = sync!.holdSync(account, 3, { keyId: 'key_1' });
      expect(a).toMatchObject({ ok: true, balance: 2 });
      expect(sync!.holdSync(account, 3)).toEqual({ ok: false, balance: 2 });
      expect(sync!.settleSync(a.ok ? a.holdId : '', 1)).toEqual({ charged: 1, balance: 4 });
      const b = sync!.holdSync(account, 4);
      expect(sync!.releaseSync(b.ok ? b.holdId : '')).toEqual({ balance: 4 });
      expect(await peer.reconcile(account)).toMatchObject({ entries: 4, balance: 4, held: 0, ok: true });
    });
  });

  it('bills through authenticate and finishCredits without a promise of its own, and refuses 402 past the balance', async () => {
    const ledger = ledgerOn();
    const account = freshAccount('auth');
    await ledger.topUp(account, 2);
    const store = new MemoryKeyStore();
    const { secret } = await new KeyManager({ store }).create({ accountId: account, name: 'k', mode: 'live' });
    const options = { credits: { ledger, cost: 1 } };
    const statuses: (string | number)[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await authenticate({ headers: { 'x-api-key': secret } }, store, options);
      if (result.ok) await finishCredits(result, 200, options);
      statuses.push(result.ok ? result.status : result.code);
    }
    expect(statuses).toEqual([200, 200, 'insufficient_credits']);
    expect(await ledger.reconcile(account)).toMatchObject({ entries: 0, balance: 0, held: 0, ok: true });
  });

  it('fails closed: 503 credit_ledger_unavailable through authenticate when another connection holds the write lock past timeoutMs', async () => {
    const ledger = new SqliteCreditLedger({ database: files.connect(path), timeoutMs: 50 });
    const account = freshAccount('busy');
    await ledger.topUp(account, 5);
    const store = new MemoryKeyStore();
    const { secret } = await new KeyManager({ store }).create({ accountId: account, name: 'k', mode: 'live' });
    const holder = files.connect(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const result = await authenticate({ headers: { 'x-api-key': secret } }, store, { credits: { ledger } });
      expect(result).toMatchObject({ ok: false, status: 503, code: 'credit_ledger_unavailable' });
      const err = await rejection(ledger.hold(account, 1));
      expect(err).toBeInstanceOf(CreditLedgerUnavailableError);
      expect(err.cause).toMatchObject({ code: 'SQLITE_BUSY' });
    } finally {
      holder.exec('ROLLBACK');
    }
    expect(await ledger.balance(account)).toBe(5);
  });

  it('prunes by itself the holds closed a day ago by default; null or 0 turns that off', () => {
    expect(ledgerOn().pruneHoldsAfterMs).toBe(86_400_000);
    expect(new SqliteCreditLedger({ database: files.connect(path), pruneHoldsAfterMs: 5_000 }).pruneHoldsAfterMs).toBe(
      5_000,
    );
    for (const off of [null, 0]) {
      expect(new SqliteCreditLedger({ database: files.connect(path), pruneHoldsAfterMs: off }).pruneHoldsAfterMs).toBe(
        null,
      );
    }
  });

  it.each([
    [-1, 'out_of_range'],
    [1.5, 'out_of_range'],
    ['86400000', 'wrong_type'],
  ])('refuses a pruneHoldsAfterMs of %j (%s), and names it when misspelt', (value, reason) => {
    const database = files.connect(path);
    expect(() => new SqliteCreditLedger({ database, pruneHoldsAfterMs: value as never })).toThrow(
      expect.objectContaining({
        code: 'invalid_input',
        field: 'pruneHoldsAfterMs',
        issues: [expect.objectContaining({ reason })],
      }),
    );
    expect(() => new SqliteCreditLedger({ database, pruneHoldsAfter: 1_000 } as never)).toThrow(
      /pruneHoldsAfter is not an option of SqliteCreditLedger; did you mean `pruneHoldsAfterMs`\?/,
    );
  });

  it('keeps closed holds with pruneHoldsAfterMs 0, where one of 50 ms over the same file prunes them', async () => {
    const db = files.connect(path);
    const stateOf = (holdId: string) =>
      (db.prepare('SELECT state FROM keygate_credit_holds WHERE id = ?').get(holdId) as { state: string } | undefined)
        ?.state;
    const account = freshAccount('prune_off');
    const billOn = async (ledger: SqliteCreditLedger) => {
      for (let i = 0; i < 5; i++) {
        const held = await ledger.hold(account, 1);
        if (held.ok) await ledger.release(held.holdId);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    };
    const off = new SqliteCreditLedger({ database: files.connect(path), pruneHoldsAfterMs: 0 });
    await off.topUp(account, 10);
    const held = await off.hold(account, 4);
    if (!held.ok) throw new Error('hold refused');
    await off.settle(held.holdId);
    await billOn(off);
    expect(stateOf(held.holdId)).toBe('settled');
    await billOn(new SqliteCreditLedger({ database: files.connect(path), pruneHoldsAfterMs: 50 }));
    expect(stateOf(held.holdId)).toBe(undefined);
  });

  it.each([
    ['database', { database: {} }],
    ['timeoutMs', { timeoutMs: 0 }],
  ])('refuses a bad %s option at construction', (field, options) => {
    expect(() => new SqliteCreditLedger({ database: files.connect(path), ...options } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});
