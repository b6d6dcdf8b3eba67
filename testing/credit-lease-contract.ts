import { LeasedCreditLedger } from 'keygate';
import { fresh } from './contract-kit.js';
import { type CreditContext, figures } from './credit-engine-cases.js';

/**
 * The leased-budget case of `describeCreditLedgerContract`: three `LeasedCreditLedger`s over the
 * ledger (and its peer) hammer one account with two keys. Internal.
 */
export async function leasedNeverOverdraws({ ledger, peer, expect }: CreditContext): Promise<void> {
  const account = fresh('acct', 'lease');
  await ledger.topUp(account, 300);
  const maxSlice = 10;
  const leased = [ledger, peer, ledger].map((l) => new LeasedCreditLedger({ ledger: l, maxSlice, divisor: 2 }));
  const charged = { key_a: 0, key_b: 0 };
  await Promise.all(
    Array.from({ length: 400 }, async (_, i) => {
      const l = leased[i % 3] as LeasedCreditLedger;
      const keyId = i % 2 === 0 ? 'key_a' : 'key_b';
      const held = await l.hold(account, 1, { keyId });
      if (!held.ok) return;
      const settled = await l.settle(held.holdId);
      charged[keyId] += settled.charged;
    }),
  );
  const total = charged.key_a + charged.key_b;
  expect(total).toBeLessThanOrEqual(300);
  // Early refusal: at most (instances - 1) * (maxSlice - 1) credits per key sat in other instances' slices.
  expect(300 - total).toBeLessThanOrEqual(2 * 2 * (maxSlice - 1));
  await Promise.all(leased.map((l) => l.close()));
  expect(await ledger.balance(account)).toBe(300 - total);
  const entries = await ledger.entries(account, { limit: 1000 });
  const spentBy = (keyId: string) =>
    entries.filter((e) => e.kind === 'charge' && e.keyId === keyId).reduce((sum, e) => sum - e.amount, 0);
  expect([spentBy('key_a'), spentBy('key_b')]).toEqual([charged.key_a, charged.key_b]);
  expect(await ledger.reconcile(account)).toEqual(figures(account, 300 - total, 300 - total, 0));
}
