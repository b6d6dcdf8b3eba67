import { capabilityOf } from 'keygate';
import { type Case, fresh, poll } from './contract-kit.js';
import type { CreditContext } from './credit-engine-cases.js';

// The `synchronous` capability's case of `describeCreditLedgerContract`: `authenticate` and the
// adapters hold, settle and release through these twins on the request path, so they must answer as
// `hold`, `settle` and `release` do. A ledger that does not declare the capability passes it as is.

async function answersAsTheAsyncCalls({ ledger, expect, lapseMs }: CreditContext): Promise<void> {
  const sync = capabilityOf(ledger, 'synchronous');
  if (!sync) return;
  const account = fresh('acct', 'sync');
  await ledger.topUp(account, 10);
  const held = sync.holdSync(account, 4, { keyId: 'key_contract' });
  expect(held).toMatchObject({ ok: true, balance: 6 });
  expect(sync.settleSync(held.ok ? held.holdId : '', 3)).toEqual({ charged: 3, balance: 7 });
  expect((await ledger.entries(account))[0]).toMatchObject({ kind: 'charge', amount: -3, keyId: 'key_contract' });
  const released = sync.holdSync(account, 2);
  expect(released).toMatchObject({ ok: true, balance: 5 });
  expect(sync.releaseSync(released.ok ? released.holdId : '')).toEqual({ balance: 7 });
  expect(sync.holdSync(account, 8)).toEqual({ ok: false, balance: 7 });
  // A hold's ttlMs is kept: it lapses, and its credits come back, as one taken by `hold` does.
  expect(sync.holdSync(account, 7, { ttlMs: lapseMs })).toMatchObject({ ok: true, balance: 0 });
  const balance = () => ledger.balance(account);
  expect(await poll(balance, (b) => b === 7, Date.now() + lapseMs + 1_000)).toBe(7);
  expect(await ledger.entries(account)).toHaveLength(2);
}

/** The `synchronous` twins' case, as `[title, run]`. */
export const SYNCHRONOUS_CASES: ReadonlyArray<Case<CreditContext>> = [
  [
    'answers holdSync, settleSync and releaseSync as hold, settle and release, if it declares them',
    answersAsTheAsyncCalls,
  ],
];
