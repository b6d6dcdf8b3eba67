import Database from 'better-sqlite3';
import { LeasedCreditLedger, MemoryCreditLedger } from 'keygate';
import { SqliteCreditLedger } from 'keygate/sqlite';
import type { CreditLedger } from 'keygate/store-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { rejection } from '../rate-limit/support/rejection.js';

const opened: LeasedCreditLedger[] = [];
function leased(ledger: CreditLedger) {
  const l = new LeasedCreditLedger({ ledger, prefetch: false });
  opened.push(l);
  return l;
}
afterEach(async () => {
  for (const l of opened.splice(0)) await l.close();
});

describe('LeasedCreditLedger.prune', () => {
  it('prunes through its shared ledger, where its settled slices are closed holds; entries and reconcile stay', async () => {
    const shared = new SqliteCreditLedger({ database: new Database(':memory:'), pruneHoldsAfterMs: null });
    await shared.migrate();
    await shared.topUp('acct_1', 100);
    const ledger = leased(shared);
    for (let i = 0; i < 3; i++) {
      const held = await ledger.hold('acct_1', 2, { keyId: 'key_1' });
      if (held.ok) await ledger.settle(held.holdId);
    }
    await ledger.close();
    // One slice: one hold of the shared ledger, settled as one charge of 6.
    expect(await ledger.prune({ olderThanMs: 0 })).toEqual({ deleted: 1 });
    expect(await ledger.prune({ olderThanMs: 0 })).toEqual({ deleted: 0 });
    expect((await ledger.entries('acct_1')).map((e) => e.amount)).toEqual([-6, 100]);
    expect(await ledger.reconcile('acct_1')).toMatchObject({ entries: 94, balance: 94, held: 0, ok: true });
  });

  it('checks olderThanMs itself, and answers deleted 0 over a shared ledger without prune', async () => {
    const memory = new MemoryCreditLedger();
    // A ledger written before prune existed: the interface's methods, no more.
    const older: CreditLedger = {
      topUp: (a, n, o) => memory.topUp(a, n, o),
      balance: (a) => memory.balance(a),
      hold: (a, n, o) => memory.hold(a, n, o),
      settle: (h, n) => memory.settle(h, n),
      release: (h) => memory.release(h),
      entries: (a, o) => memory.entries(a, o),
      reconcile: (a) => memory.reconcile(a),
    };
    const ledger = leased(older);
    expect(await rejection(ledger.prune({ olderThanMs: -1 }))).toMatchObject({
      code: 'invalid_input',
      field: 'olderThanMs',
    });
    expect(await ledger.prune({ olderThanMs: 0 })).toEqual({ deleted: 0 });
  });
});
