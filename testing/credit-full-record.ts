import type { CreditEntry } from 'keygate';
import { type Case, type Expect, fresh } from './contract-kit.js';
import { type CreditContext, figures } from './credit-engine-cases.js';

const freshAccount = () => fresh('acct', 'full');
// How far a backend's clock (a database server's) may stand from this process's, in milliseconds.
const CLOCK_SLACK_MS = 5_000;

/** The id and creation time each entry was given, checked for shape, so the rest can be compared whole. */
function stampsOf(entries: readonly CreditEntry[], fromMs: number, toMs: number, expect: Expect) {
  expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  for (const { id, createdAt } of entries) {
    expect(typeof id === 'string' && id.length > 0).toBe(true);
    expect(new Date(createdAt).toISOString()).toBe(createdAt);
    const ms = Date.parse(createdAt);
    expect(ms >= fromMs - CLOCK_SLACK_MS && ms <= toMs + CLOCK_SLACK_MS).toBe(true);
  }
  return entries.map(({ id, createdAt }) => ({ id, createdAt }));
}

async function keepsEveryEntryField({ ledger, peer, expect }: CreditContext): Promise<void> {
  const account = freshAccount();
  const fromMs = Date.now();
  expect(await ledger.topUp(account, 100, { reference: 'pay_full — 1' })).toEqual({ balance: 100 });
  expect(await peer.topUp(account, 7)).toEqual({ balance: 107 });
  // A hold's key id, amount and account are stored with it: another instance settles it.
  const keyed = await ledger.hold(account, 30, { keyId: 'key_full_a', ttlMs: 60_000 });
  expect(keyed).toMatchObject({ ok: true, balance: 77 });
  expect(await peer.reconcile(account)).toEqual(figures(account, 107, 77, 30));
  expect(await peer.settle(keyed.ok ? keyed.holdId : '', 12)).toEqual({ charged: 12, balance: 95 });
  const bare = await peer.hold(account, 5);
  expect(bare).toMatchObject({ ok: true, balance: 90 });
  expect(await ledger.settle(bare.ok ? bare.holdId : '')).toEqual({ charged: 5, balance: 90 });
  const toMs = Date.now();

  const listed = await ledger.entries(account);
  const [a, b, c, d] = stampsOf(listed, fromMs, toMs, expect);
  const expected: CreditEntry[] = [
    { ...a, accountId: account, kind: 'charge', amount: -5, balance: 90 },
    { ...b, accountId: account, kind: 'charge', amount: -12, balance: 95, keyId: 'key_full_a' },
    { ...c, accountId: account, kind: 'top_up', amount: 7, balance: 107 },
    { ...d, accountId: account, kind: 'top_up', amount: 100, balance: 100, reference: 'pay_full — 1' },
  ] as CreditEntry[];
  expect(listed).toEqual(expected);
  expect(await peer.entries(account)).toEqual(expected);
  expect(await peer.entries(account, { limit: 2 })).toEqual(expected.slice(0, 2));
  expect(await ledger.reconcile(account)).toEqual(figures(account, 90, 90, 0));
}

async function keepsHoldAcrossInstances({ ledger, peer, expect }: CreditContext): Promise<void> {
  const account = freshAccount();
  await ledger.topUp(account, 50);
  const held = await ledger.hold(account, 20, { keyId: 'key_full_b', ttlMs: 60_000 });
  expect(held).toMatchObject({ ok: true, balance: 30 });
  // Released by another instance: the whole amount returns to the account it was taken from, no entry.
  expect(await peer.release(held.ok ? held.holdId : '')).toEqual({ balance: 50 });
  expect(await ledger.balance(account)).toBe(50);
  expect(await peer.entries(account)).toHaveLength(1);
  expect(await peer.reconcile(account)).toEqual(figures(account, 50, 50, 0));
}

/** Every stored field of a ledger entry and a hold, through each call and a read by another instance. */
export const CREDIT_RECORD_CASES: ReadonlyArray<Case<CreditContext>> = [
  [
    'keeps every field of an entry, set and absent (reference, keyId), through top-ups, holds and settles on either instance',
    keepsEveryEntryField,
  ],
  ['keeps a hold’s account, amount and key id for another instance to release', keepsHoldAcrossInstances],
];
