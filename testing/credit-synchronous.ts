import { type CreditLedger, capabilityOf } from 'keygate';
import type { ContractTestApi } from './contract-types.js';

// The `synchronous` capability's case of `describeCreditLedgerContract`: `authenticate` and the
// adapters hold, settle and release through these twins on the request path, so they must answer as
// `hold`, `settle` and `release` do. A ledger that does not declare the capability passes it as is.

interface Context {
  readonly ledger: CreditLedger;
  readonly expect: ContractTestApi['expect'];
  readonly lapseMs: number;
}

const RUN = Math.random().toString(36).slice(2, 10);
let accounts = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answersAsTheAsyncCalls({ ledger, expect, lapseMs }: Context): Promise<void> {
  const sync = capabilityOf(ledger, 'synchronous');
  if (!sync) return;
  const account = `acct_sync_${RUN}_${++accounts}`;
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
  const deadline = Date.now() + lapseMs + 1_000;
  while ((await ledger.balance(account)) !== 7 && Date.now() < deadline) await sleep(50);
  expect(await ledger.balance(account)).toBe(7);
  expect(await ledger.entries(account)).toHaveLength(2);
}

/** The `synchronous` twins' case, as `[title, run]`. */
export const SYNCHRONOUS_CASES: ReadonlyArray<readonly [string, (c: Context) => Promise<void>]> = [
  [
    'answers holdSync, settleSync and releaseSync as hold, settle and release, if it declares them',
    answersAsTheAsyncCalls,
  ],
];
