import type { CreditLedger } from 'keygate';
import type { Case, Expect } from './contract-kit.js';
import { expectsTimeout, expectsUnavailable, fresh, need, rejection, sleep } from './contract-kit.js';
import type { CreditLedgerHook, CreditLedgerHooks } from './credit-hooks.js';

/** What a case of the credit-ledger contract works with: the fixture's ledger, its peer (or itself) and its hooks. */
export interface CreditContext {
  readonly ledger: CreditLedger;
  readonly peer: CreditLedger;
  readonly hooks: CreditLedgerHooks;
  readonly expect: Expect;
  /** The `ttlMs` of the hold the suite lets lapse, in milliseconds. */
  readonly lapseMs: number;
  /** Whether `prune` finds the records of closed holds to delete (see `CreditLedgerContractOptions`). */
  readonly prunesClosedHolds: boolean;
}

/** What `reconcile(accountId)` answers for these figures. */
export function figures(accountId: string, entries: number, balance: number, held: number, ok = true) {
  return { accountId, entries, balance, held, ok };
}

const freshAccount = (label: string) => fresh('acct', label);
const holdIdOf = (result: { ok: boolean; holdId?: string }) => (result.ok ? String(result.holdId) : '');

async function refusesOverClosedHold({ ledger, expect }: CreditContext): Promise<void> {
  const account = freshAccount('over_closed');
  await ledger.topUp(account, 10);
  const holdId = holdIdOf(await ledger.hold(account, 3));
  expect(await rejection(ledger.settle(holdId, 4))).toMatchObject({ code: 'invalid_input', field: 'amount' });
  expect(await ledger.release(holdId)).toEqual({ balance: 10 });
  expect(await ledger.settle(holdId, 4)).toEqual({ charged: 0, balance: 10 });
  expect(await ledger.entries(account)).toHaveLength(1);
}

async function sumsPastOnePage({ ledger, peer, expect }: CreditContext): Promise<void> {
  const account = freshAccount('big');
  await ledger.topUp(account, Number.MAX_SAFE_INTEGER - 1_200);
  for (let i = 0; i < 1_100; i++) await (i % 2 ? peer : ledger).topUp(account, 1);
  const sum = Number.MAX_SAFE_INTEGER - 100;
  expect(await ledger.reconcile(account)).toEqual(figures(account, sum, sum, 0));
  expect(await peer.balance(account)).toBe(Number.MAX_SAFE_INTEGER - 100);
}

async function reconcilesWriteAround({ ledger, hooks, expect }: CreditContext): Promise<void> {
  const account = freshAccount('tampered');
  await ledger.topUp(account, 10);
  await ledger.hold(account, 3);
  await need(hooks, 'writeAround')(account, 5);
  expect(await ledger.reconcile(account)).toEqual(figures(account, 15, 7, 3, false));
}

async function lapsesInNextCall({ ledger, hooks, expect }: CreditContext): Promise<void> {
  const holdState = need(hooks, 'holdState');
  const account = freshAccount('sweep');
  await ledger.topUp(account, 10);
  const holdId = holdIdOf(await ledger.hold(account, 4, { ttlMs: 100 }));
  await sleep(200);
  // Expired but not yet swept: balance() counts it as returned without writing anything.
  expect(await ledger.balance(account)).toBe(10);
  expect(await holdState(holdId)).toBe('open');
  expect(await ledger.hold(account, 10)).toMatchObject({ ok: true, balance: 0 });
  expect(await holdState(holdId)).toBe('lapsed');
}

async function keepsStoredSum({ ledger, peer, hooks, expect }: CreditContext): Promise<void> {
  const account = freshAccount('invariant');
  await ledger.topUp(account, 50);
  const holds = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? peer : ledger).hold(account, 5)));
  await ledger.settle(holdIdOf(holds[0] ?? { ok: false }), 2);
  await peer.release(holdIdOf(holds[1] ?? { ok: false }));
  expect(await need(hooks, 'storedFigures')(account)).toEqual({ entries: 48, available: 28, open: 20 });
}

async function timesOut({ hooks, expect }: CreditContext): Promise<void> {
  const { ledger, unstick } = need(hooks, 'stalled')(50);
  await expectsTimeout(expect, 'credit_ledger_unavailable', () => ledger.hold('acct_stalled', 1), unstick);
}

async function failsWhenEnded({ hooks, expect }: CreditContext): Promise<void> {
  const ledger = await need(hooks, 'ended')();
  for (const call of [
    () => ledger.topUp(freshAccount('ended'), 1),
    () => ledger.balance('acct_ended'),
    () => ledger.hold('acct_ended', 1),
    () => ledger.entries('acct_ended'),
    () => ledger.reconcile('acct_ended'),
  ]) {
    await expectsUnavailable(expect, 'credit_ledger_unavailable', call);
  }
}

async function migratesConcurrently({ hooks, expect }: CreditContext): Promise<void> {
  const { ledgers, drop } = await need(hooks, 'unmigrated')(4);
  try {
    await Promise.all(ledgers.map((l) => l.migrate()));
    await ledgers[0]?.migrate();
    expect(await ledgers[1]?.topUp('acct_1', 3)).toEqual({ balance: 3 });
    expect(await ledgers[2]?.balance('acct_1')).toBe(3);
  } finally {
    await drop?.();
  }
}

/** The cases every ledger runs that reach no further than its interface. */
export const CREDIT_EDGE_CASES: ReadonlyArray<Case<CreditContext>> = [
  [
    'refuses to settle more than an open hold, but a settle of more than a closed hold changes nothing',
    refusesOverClosedHold,
  ],
  ['sums entries near 2**53 and past one page of entries exactly, through either instance', sumsPastOnePage, 120_000],
];

/** The cases of each hook, run when the options name it. */
export const CREDIT_HOOK_CASES: ReadonlyArray<readonly [CreditLedgerHook, ...Case<CreditContext>]> = [
  [
    'writeAround',
    'reconciles as not ok, with the figures, once an entry was written around the ledger',
    reconcilesWriteAround,
  ],
  ['holdState', 'lapses an expired hold inside the next call on its account, with no background job', lapsesInNextCall],
  [
    'storedFigures',
    'keeps the sum of the stored entries equal to the stored balance plus the open holds',
    keepsStoredSum,
  ],
  [
    'stalled',
    'rejects with credit_ledger_unavailable at its timeout when the backend never answers, and absorbs the late failure',
    timesOut,
  ],
  [
    'ended',
    'rejects with credit_ledger_unavailable, the client’s error as cause, once its client is closed',
    failsWhenEnded,
  ],
  ['unmigrated', 'migrates idempotently, also when several instances migrate at once', migratesConcurrently, 60_000],
];
