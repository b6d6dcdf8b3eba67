import type { CreditEntry, CreditLedger, HoldResult } from 'keygate';
import { type Case, describeCases, type Expect, fresh, poll, RUN, rejection, sleep } from './contract-kit.js';
import type { ContractTestApi } from './contract-types.js';
import { type CreditContext as Context, CREDIT_EDGE_CASES, CREDIT_HOOK_CASES, figures } from './credit-engine-cases.js';
import { CREDIT_RECORD_CASES } from './credit-full-record.js';
import type { CreditLedgerHook, CreditLedgerHooks } from './credit-hooks.js';
import { leasedNeverOverdraws } from './credit-lease-contract.js';
import { PRUNE_CASES, PRUNE_HOOK_CASES } from './credit-prune.js';
import { SYNCHRONOUS_CASES } from './credit-synchronous.js';

/**
 * A ledger for one test of {@link describeCreditLedgerContract}. Its state must not leak between
 * tests; a shared backend may keep one database, since every test uses accounts of its own.
 *
 * @example
 * const fixture: CreditLedgerFixture = { ledger: new MemoryCreditLedger() };
 */
export interface CreditLedgerFixture extends CreditLedgerHooks {
  ledger: CreditLedger;
  /** A second ledger over the same data, as another process would hold it; concurrent calls are spread over both. Default: `ledger`. */
  peer?: CreditLedger;
  /** Releases what the fixture opened. */
  close?(): Promise<void>;
}

/**
 * Options of {@link describeCreditLedgerContract}.
 *
 * @example
 * describeCreditLedgerContract('MyCreditLedger', factory, t, { lapseMs: 1_000 });
 */
export interface CreditLedgerContractOptions {
  /** The `ttlMs` of the hold the suite lets lapse, in milliseconds. Default `300`. */
  lapseMs?: number;
  /**
   * The {@link CreditLedgerHooks} every fixture has; the suite adds the cases that reach around the
   * ledger through them (a write around it, a hold's stored state, the stored figures, a stalled or
   * ended client, a concurrent migration). Default `[]`.
   */
  hooks?: readonly CreditLedgerHook[];
  /**
   * Whether `prune` finds the records of closed holds to delete, so that the suite counts them: true
   * for a ledger that keeps each closed hold where `prune` reaches it (the SQL ledgers); false for one
   * whose `prune` answers `{ deleted: 0 }` (memory and Redis keep no closed hold; a Durable Object
   * prunes its own). Default `true`.
   */
  prunesClosedHolds?: boolean;
}

// Every test works on accounts no other test or run touches.
const freshAccount = (label: string) => fresh('acct', label);
// How much later than its ttl a lapsed hold's credits may show, in milliseconds.
const LAPSE_GRACE_MS = 1_000;

function heldId(result: HoldResult, expect: Expect): string {
  expect(result.ok).toBe(true);
  return result.ok ? result.holdId : '';
}

const sumOf = (entries: readonly CreditEntry[]) => entries.reduce((sum, e) => sum + e.amount, 0);

async function unknownAccount({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('unknown');
  expect(await ledger.balance(account)).toBe(0);
  expect(await ledger.entries(account)).toEqual([]);
}

async function topsUp({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('topup');
  expect(await ledger.topUp(account, 100)).toEqual({ balance: 100 });
  expect(await ledger.topUp(account, 50, { reference: 'pay_1' })).toEqual({ balance: 150 });
  expect(await ledger.balance(account)).toBe(150);
  const [latest, first] = await ledger.entries(account);
  expect(latest).toMatchObject({ accountId: account, kind: 'top_up', amount: 50, balance: 150, reference: 'pay_1' });
  expect(first).toMatchObject({ accountId: account, kind: 'top_up', amount: 100, balance: 100 });
  expect(first?.reference).toBe(undefined);
  expect(first?.keyId).toBe(undefined);
  for (const entry of [latest, first]) {
    expect(typeof entry?.id).toBe('string');
    expect(new Date(entry?.createdAt ?? '').toISOString()).toBe(entry?.createdAt);
  }
  expect(latest?.id).not.toBe(first?.id);
}

async function referenceOnce({ ledger, expect }: Context): Promise<void> {
  const [account, other] = [freshAccount('ref'), freshAccount('ref_other')];
  expect(await ledger.topUp(account, 100, { reference: 'pay_1' })).toEqual({ balance: 100 });
  const held = await ledger.hold(account, 30);
  expect(await ledger.topUp(account, 100, { reference: 'pay_1' })).toEqual({ balance: 70 });
  expect(await ledger.topUp(account, 5, { reference: 'pay_1' })).toEqual({ balance: 70 });
  expect(await ledger.balance(account)).toBe(70);
  expect(await ledger.entries(account)).toHaveLength(1);
  await ledger.release(heldId(held, expect));
  expect(await ledger.topUp(other, 40, { reference: 'pay_1' })).toEqual({ balance: 40 });
  expect(await ledger.topUp(account, 1, { reference: 'pay_2' })).toEqual({ balance: 101 });
}

async function referenceOnceConcurrently({ ledger, peer, expect }: Context): Promise<void> {
  const account = freshAccount('ref_race');
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => (i % 2 ? peer : ledger).topUp(account, 25, { reference: 'evt_1' })),
  );
  for (const answer of answers) expect(answer).toEqual({ balance: 25 });
  expect(await ledger.balance(account)).toBe(25);
  expect(await ledger.entries(account)).toHaveLength(1);
}

async function holds({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('hold');
  await ledger.topUp(account, 10);
  const held = await ledger.hold(account, 4);
  expect(held).toMatchObject({ ok: true, balance: 6 });
  expect(typeof (held.ok && held.holdId)).toBe('string');
  expect(await ledger.balance(account)).toBe(6);
  expect(await ledger.hold(account, 7)).toEqual({ ok: false, balance: 6 });
  expect(await ledger.balance(account)).toBe(6);
  expect(await ledger.hold(account, 6)).toMatchObject({ ok: true, balance: 0 });
  expect(await ledger.hold(account, 1)).toEqual({ ok: false, balance: 0 });
  expect(await ledger.hold(freshAccount('hold_empty'), 1)).toEqual({ ok: false, balance: 0 });
  expect(await ledger.entries(account)).toHaveLength(1);
}

async function settlesAll({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('settle');
  await ledger.topUp(account, 10);
  const holdId = heldId(await ledger.hold(account, 4, { keyId: 'key_contract' }), expect);
  expect(await ledger.settle(holdId)).toEqual({ charged: 4, balance: 6 });
  expect(await ledger.balance(account)).toBe(6);
  const entries = await ledger.entries(account);
  expect(entries).toHaveLength(2);
  expect(entries[0]).toMatchObject({
    accountId: account,
    kind: 'charge',
    amount: -4,
    balance: 6,
    keyId: 'key_contract',
  });
  expect(entries[0]?.reference).toBe(undefined);
}

async function settlesPart({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('settle_part');
  await ledger.topUp(account, 10);
  const part = heldId(await ledger.hold(account, 5), expect);
  expect(await ledger.settle(part, 2)).toEqual({ charged: 2, balance: 8 });
  const whole = heldId(await ledger.hold(account, 3), expect);
  expect(await ledger.settle(whole, 3)).toEqual({ charged: 3, balance: 5 });
  const none = heldId(await ledger.hold(account, 4), expect);
  expect(await ledger.settle(none, 0)).toEqual({ charged: 0, balance: 5 });
  expect(await ledger.settle(none)).toEqual({ charged: 0, balance: 5 });
  const entries = await ledger.entries(account);
  expect(entries.map((e) => [e.kind, e.amount, e.balance])).toEqual([
    ['charge', -3, 5],
    ['charge', -2, 8],
    ['top_up', 10, 10],
  ]);
}

async function refusesSettleOverHold({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('settle_over');
  await ledger.topUp(account, 10);
  const holdId = heldId(await ledger.hold(account, 3), expect);
  expect(await rejection(ledger.settle(holdId, 4))).toMatchObject({ code: 'invalid_input', field: 'amount' });
  expect(await ledger.balance(account)).toBe(7);
  expect(await ledger.entries(account)).toHaveLength(1);
  expect(await ledger.settle(holdId)).toEqual({ charged: 3, balance: 7 });
}

async function releases({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('release');
  await ledger.topUp(account, 10);
  const holdId = heldId(await ledger.hold(account, 4), expect);
  expect(await ledger.release(holdId)).toEqual({ balance: 10 });
  expect(await ledger.balance(account)).toBe(10);
  expect(await ledger.entries(account)).toHaveLength(1);
}

async function closesOnce({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('once');
  await ledger.topUp(account, 20);
  const settled = heldId(await ledger.hold(account, 4), expect);
  await ledger.settle(settled);
  expect(await ledger.settle(settled)).toEqual({ charged: 0, balance: 16 });
  expect(await ledger.release(settled)).toEqual({ balance: 16 });
  const released = heldId(await ledger.hold(account, 5), expect);
  await ledger.release(released);
  expect(await ledger.release(released)).toEqual({ balance: 16 });
  expect(await ledger.settle(released)).toEqual({ charged: 0, balance: 16 });
  expect(await ledger.balance(account)).toBe(16);
  expect(await ledger.entries(account)).toHaveLength(2);
}

async function unknownHold({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('unknown_hold');
  await ledger.topUp(account, 5);
  const settled = await ledger.settle(`hold_unknown_${RUN}`);
  expect(settled.charged).toBe(0);
  expect(typeof settled.balance).toBe('number');
  expect(typeof (await ledger.release(`hold_unknown_${RUN}`)).balance).toBe('number');
  expect(await ledger.balance(account)).toBe(5);
  expect(await ledger.entries(account)).toHaveLength(1);
}

async function lapses({ ledger, expect, lapseMs }: Context): Promise<void> {
  const account = freshAccount('lapse');
  await ledger.topUp(account, 10);
  const heldAt = Date.now();
  const holdId = heldId(await ledger.hold(account, 4, { ttlMs: lapseMs }), expect);
  // Real time: poll until the credits are back, for at most the ttl and the grace the contract allows.
  const balance = () => ledger.balance(account);
  expect(await poll(balance, (b) => b === 10, heldAt + lapseMs + LAPSE_GRACE_MS, 25)).toBe(10);
  expect(await ledger.settle(holdId)).toEqual({ charged: 0, balance: 10 });
  expect(await ledger.release(holdId)).toEqual({ balance: 10 });
  expect(await ledger.entries(account)).toHaveLength(1);
}

async function keepsOpenHold({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('open');
  await ledger.topUp(account, 10);
  const holdId = heldId(await ledger.hold(account, 4, { ttlMs: 60_000 }), expect);
  await sleep(50);
  expect(await ledger.balance(account)).toBe(6);
  expect(await ledger.settle(holdId)).toEqual({ charged: 4, balance: 6 });
}

async function listsNewestFirst({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('entries');
  for (let amount = 1; amount <= 5; amount++) await ledger.topUp(account, amount);
  const latest = await ledger.entries(account, { limit: 3 });
  expect(latest.map((e) => e.amount)).toEqual([5, 4, 3]);
  const all = await ledger.entries(account);
  expect(all.map((e) => [e.amount, e.balance])).toEqual([
    [5, 15],
    [4, 10],
    [3, 6],
    [2, 3],
    [1, 1],
  ]);
  expect(new Set(all.map((e) => e.id)).size).toBe(5);
  await ledger.topUp(freshAccount('entries_other'), 7);
  expect(await ledger.entries(account)).toHaveLength(5);
}

async function reconciles({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('reconcile');
  await ledger.topUp(account, 100, { reference: 'pay_1' });
  const partly = heldId(await ledger.hold(account, 10, { keyId: 'key_a' }), expect);
  await ledger.settle(partly, 4);
  const released = heldId(await ledger.hold(account, 20), expect);
  await ledger.release(released);
  heldId(await ledger.hold(account, 5), expect);
  const whole = heldId(await ledger.hold(account, 7, { keyId: 'key_b' }), expect);
  await ledger.settle(whole);
  await ledger.topUp(account, 100, { reference: 'pay_1' });
  await ledger.topUp(account, 30);
  const balance = await ledger.balance(account);
  expect(balance).toBe(100 - 4 - 5 - 7 + 30);
  const entries = await ledger.entries(account);
  expect(entries.map((e) => e.amount)).toEqual([30, -7, -4, 100]);
  // Every entry amount adds up to the balance plus the open hold (5).
  expect(sumOf(entries)).toBe(balance + 5);
  expect(entries[0]?.balance).toBe(balance);
  expect(await ledger.reconcile(account)).toEqual(figures(account, balance + 5, balance, 5));
}

async function reconcilesUnknown({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('reconcile_unknown');
  expect(await ledger.reconcile(account)).toEqual(figures(account, 0, 0, 0));
}

async function reconcilesHistory({ ledger, expect, lapseMs }: Context): Promise<void> {
  const account = freshAccount('reconcile_history');
  await ledger.topUp(account, 100, { reference: 'pay_1' });
  await ledger.topUp(account, 100, { reference: 'pay_1' });
  await ledger.topUp(account, 50);
  const heldAt = Date.now();
  heldId(await ledger.hold(account, 8, { ttlMs: lapseMs }), expect);
  await ledger.settle(heldId(await ledger.hold(account, 10, { keyId: 'key_a' }), expect), 4);
  await ledger.settle(heldId(await ledger.hold(account, 7), expect));
  await ledger.settle(heldId(await ledger.hold(account, 3), expect), 0);
  await ledger.release(heldId(await ledger.hold(account, 20), expect));
  heldId(await ledger.hold(account, 5, { ttlMs: 60_000 }), expect);
  // Entries: 100 + 50 - 4 - 7 = 139; open: the lapsing 8 and the 5.
  expect(await ledger.reconcile(account)).toEqual(figures(account, 139, 126, 13));
  const balance = () => ledger.balance(account);
  await poll(balance, (b) => b === 134, heldAt + lapseMs + LAPSE_GRACE_MS, 25);
  expect(await ledger.reconcile(account)).toEqual(figures(account, 139, 134, 5));
}

async function concurrentHolds({ ledger, peer, expect }: Context): Promise<void> {
  const account = freshAccount('race');
  await ledger.topUp(account, 20);
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? peer : ledger).hold(account, 1)));
  const granted = results.filter((r) => r.ok);
  expect(granted).toHaveLength(20);
  expect(new Set(granted.map((r) => r.ok && r.holdId)).size).toBe(20);
  expect(await ledger.balance(account)).toBe(0);
  expect(await peer.balance(account)).toBe(0);
  const settled = await Promise.all(granted.map((r, i) => (i % 2 ? peer : ledger).settle(r.ok ? r.holdId : '')));
  expect(settled.reduce((sum, s) => sum + s.charged, 0)).toBe(20);
  expect(await ledger.balance(account)).toBe(0);
  const entries = await ledger.entries(account);
  expect(entries).toHaveLength(21);
  expect(sumOf(entries)).toBe(0);
  expect(await peer.reconcile(account)).toEqual(figures(account, 0, 0, 0));
}

async function chargesOnce({ ledger, peer, expect }: Context): Promise<void> {
  const account = freshAccount('close_race');
  await ledger.topUp(account, 100);
  let charged = 0;
  for (let round = 0; round < 10; round++) {
    const holdId = heldId(await ledger.hold(account, 3), expect);
    const [settle, again, release] = await Promise.all([
      ledger.settle(holdId),
      peer.settle(holdId),
      (round % 2 ? ledger : peer).release(holdId),
    ]);
    expect(settle.charged + again.charged === 0 || settle.charged + again.charged === 3).toBe(true);
    expect(typeof release.balance).toBe('number');
    charged += settle.charged + again.charged;
  }
  const balance = await ledger.balance(account);
  expect(balance).toBe(100 - charged);
  const entries = await ledger.entries(account);
  expect(entries).toHaveLength(1 + charged / 3);
  expect(sumOf(entries)).toBe(balance);
  expect(await ledger.reconcile(account)).toMatchObject({ entries: balance, balance, held: 0, ok: true });
}

/** Bad amounts: what the case is, the value, and the reason the error gives. */
const BAD_AMOUNTS: ReadonlyArray<readonly [title: string, amount: unknown, reason: string]> = [
  ['a negative amount', -1, 'out_of_range'],
  ['a fractional amount', 0.5, 'out_of_range'],
  ['a NaN amount', Number.NaN, 'out_of_range'],
  ['an infinite amount', Number.POSITIVE_INFINITY, 'out_of_range'],
  ['an amount of 2**53', 2 ** 53, 'out_of_range'],
  ['an amount as text', '5', 'wrong_type'],
];

async function refusesAmount({ ledger, expect }: Context, amount: unknown, reason: string): Promise<void> {
  const account = freshAccount('bad_amount');
  await ledger.topUp(account, 10);
  const holdId = heldId(await ledger.hold(account, 3), expect);
  const loose = ledger as unknown as Record<'topUp' | 'hold' | 'settle', (...args: unknown[]) => Promise<unknown>>;
  const refused = { code: 'invalid_input', field: 'amount', issues: [{ field: 'amount', reason }] };
  expect(await rejection(loose.topUp.call(ledger, account, amount))).toMatchObject(refused);
  expect(await rejection(loose.topUp.call(ledger, account, amount, { reference: 'pay_bad' }))).toMatchObject(refused);
  expect(await rejection(loose.hold.call(ledger, account, amount))).toMatchObject(refused);
  expect(await rejection(loose.settle.call(ledger, holdId, amount))).toMatchObject(refused);
  // Nothing written: the balance, the entries and the hold are as they were, and the reference is unused.
  expect(await ledger.balance(account)).toBe(7);
  expect(await ledger.entries(account)).toHaveLength(1);
  expect(await ledger.settle(holdId)).toEqual({ charged: 3, balance: 7 });
  expect(await ledger.topUp(account, 1, { reference: 'pay_bad' })).toEqual({ balance: 8 });
}

async function refusesOverflow({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('overflow');
  await ledger.topUp(account, Number.MAX_SAFE_INTEGER - 5);
  heldId(await ledger.hold(account, 3), expect);
  const refused = { code: 'invalid_input', field: 'amount', issues: [{ reason: 'out_of_range' }] };
  expect(await rejection(ledger.topUp(account, 6))).toMatchObject(refused);
  expect(await ledger.balance(account)).toBe(Number.MAX_SAFE_INTEGER - 8);
  expect(await ledger.entries(account)).toHaveLength(1);
  expect(await ledger.topUp(account, 5)).toEqual({ balance: Number.MAX_SAFE_INTEGER - 3 });
}

async function refusesZero({ ledger, expect }: Context): Promise<void> {
  const account = freshAccount('zero');
  const refused = { code: 'invalid_input', field: 'amount', issues: [{ reason: 'out_of_range' }] };
  expect(await rejection(ledger.topUp(account, 0))).toMatchObject(refused);
  await ledger.topUp(account, 10);
  expect(await rejection(ledger.hold(account, 0))).toMatchObject(refused);
  expect(await ledger.balance(account)).toBe(10);
  expect(await ledger.entries(account)).toHaveLength(1);
}

type Call = (ledger: CreditLedger, account: string) => Promise<unknown>;
const loosely = (ledger: CreditLedger) => ledger as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;

/** Bad arguments other than amounts: the field the `invalid_input` error names, what the case is, and the call. */
const BAD_ARGUMENTS: ReadonlyArray<readonly [field: string, title: string, call: Call]> = [
  ['accountId', 'an empty account id to topUp', (l) => l.topUp('', 1)],
  ['accountId', 'a number as account id to balance', (l) => loosely(l).balance?.call(l, 42) as Promise<unknown>],
  ['accountId', 'an account id of 201 characters to hold', (l) => l.hold('a'.repeat(201), 1)],
  ['accountId', 'an account id with a line break to entries', (l) => l.entries('acct\n1')],
  ['accountId', 'an empty account id to reconcile', (l) => l.reconcile('')],
  ['reference', 'an empty reference', (l, a) => l.topUp(a, 1, { reference: '' })],
  ['reference', 'a number as reference', (l, a) => l.topUp(a, 1, { reference: 7 as unknown as string })],
  ['keyId', 'an empty key id', (l, a) => l.hold(a, 1, { keyId: '' })],
  ['ttlMs', 'a ttl of 0', (l, a) => l.hold(a, 1, { ttlMs: 0 })],
  ['ttlMs', 'a fractional ttl', (l, a) => l.hold(a, 1, { ttlMs: 1.5 })],
  ['ttlMs', 'a ttl of more than a day', (l, a) => l.hold(a, 1, { ttlMs: 86_400_001 })],
  ['ttl', 'a ttl without its unit', (l, a) => l.hold(a, 1, { ttl: 1000 } as never)],
  ['holdId', 'a number as hold id to settle', (l) => loosely(l).settle?.call(l, 42) as Promise<unknown>],
  ['holdId', 'an empty hold id to release', (l) => l.release('')],
  ['limit', 'a limit of 0', (l, a) => l.entries(a, { limit: 0 })],
  ['limit', 'a limit of 1,001', (l, a) => l.entries(a, { limit: 1001 })],
];

async function refusesArgument({ ledger, expect }: Context, field: string, call: Call): Promise<void> {
  const account = freshAccount('bad_argument');
  await ledger.topUp(account, 10);
  expect(await rejection(call(ledger, account))).toMatchObject({ code: 'invalid_input', field });
  expect(await ledger.balance(account)).toBe(10);
  expect(await ledger.entries(account)).toHaveLength(1);
}

/**
 * The behaviour every `CreditLedger` must have, as a test suite a host runs against its own ledger:
 * an unknown account at 0; top-ups and their entries, a reference credited once per account (also
 * among concurrent calls); holds taken whole or not at all; settle (whole, part, 0, more than held
 * refused), release, each closing a hold once (a second call, a call after the other, an unknown hold
 * id change nothing); a hold lapsing after its `ttlMs` with its credits back within a second; entries
 * newest first with `limit`; the sum of the entries equal to the balance plus the open holds, and
 * `reconcile` reporting it (an unknown account at zeros); `prune` deleting closed holds older than
 * its `olderThanMs` (counted unless `prunesClosedHolds` is false), never an open or recent hold nor an
 * entry, a pruned hold's id settling as an unknown one, and its options checked; bad
 * amounts (and a top-up past 2**53 - 1 credits) and arguments refused as `invalid_input` naming them, with nothing written; and exactness
 * under concurrency (50 holds of 1 against 20 credits, settles racing releases), spread over `peer`
 * when the fixture has one. It runs in real time (a lapse is found by polling), and every test uses
 * accounts of its own, so a fixture may share one backend between tests and runs.
 *
 * @example
 * import { describe, it, expect, beforeEach, afterEach } from 'vitest';
 * import { describeCreditLedgerContract } from 'keygate/testing';
 * describeCreditLedgerContract('MyCreditLedger', async () => ({ ledger: new MyCreditLedger(client) }), { describe, it, expect, beforeEach, afterEach });
 */
export function describeCreditLedgerContract(
  name: string,
  factory: () => Promise<CreditLedgerFixture>,
  t: ContractTestApi,
  options: CreditLedgerContractOptions = {},
): void {
  const lapseMs = options.lapseMs ?? 300;
  const lapseTimeoutMs = lapseMs + LAPSE_GRACE_MS + 5_000;
  const cases: Case<Context>[] = [
    ...SYNCHRONOUS_CASES,
    // Early, while few holds of earlier cases are open: one lapsing during it would join its count.
    ...PRUNE_CASES,
    ['gives an unknown account a balance of 0 and no entries', unknownAccount],
    ['adds a top-up to the balance and writes a top_up entry with the balance after it', topsUp],
    [
      "credits a reference once per account: a repeat changes nothing and returns the balance; another account's is its own",
      referenceOnce,
    ],
    ['credits a reference once among 10 concurrent top-ups', referenceOnceConcurrently],
    ['takes a hold from the balance whole, or answers ok false with the balance and takes nothing', holds],
    ['settles a hold as one charge entry with a negative amount, carrying its key id', settlesAll],
    ['settles part of a hold, all of it, or 0, and returns the rest', settlesPart],
    ['refuses to settle more than the hold as invalid_input naming amount, and changes nothing', refusesSettleOverHold],
    ['releases a hold whole and writes no entry', releases],
    [
      'closes a hold once: a second settle or release, or one after the other, changes nothing and does not throw',
      closesOnce,
    ],
    ['settles and releases an unknown hold id without throwing, changing nothing', unknownHold],
    ['keeps a hold open before its ttl ends', keepsOpenHold],
    ['lists entries newest first, at most limit of them', listsNewestFirst],
    ['keeps the sum of the entries equal to the balance plus the open holds', reconciles],
    ['reconciles an unknown account as ok, with zeros', reconcilesUnknown],
    ['grants exactly 20 of 50 concurrent holds of 1 against a balance of 20', concurrentHolds],
    ['charges a hold at most once when settles and a release race', chargesOnce],
    ['refuses an amount of 0 to topUp and hold as invalid_input naming amount', refusesZero],
    [
      'refuses a top-up that would take the credits, available and held, past 2**53 - 1, writing nothing',
      refusesOverflow,
    ],
    ...CREDIT_RECORD_CASES,
    ...CREDIT_EDGE_CASES,
    ...[...CREDIT_HOOK_CASES, ...PRUNE_HOOK_CASES]
      .filter(([hook]) => options.hooks?.includes(hook))
      .map(([, ...rest]) => rest),
    [
      'lapses a hold not closed within its ttlMs: its credits return within a second, and a later settle charges 0',
      lapses,
      lapseTimeoutMs,
    ],
    [
      'reconciles after top-ups (one a repeated reference), holds, settles of all, part and 0, a release and a lapse',
      reconcilesHistory,
      lapseTimeoutMs,
    ],
    [
      'leases: three LeasedCreditLedgers over it never overdraw, charge each key what it spent, and reconcile',
      leasedNeverOverdraws,
    ],
    ...BAD_AMOUNTS.map(
      ([title, amount, reason]): Case<Context> => [
        `refuses ${title} to topUp, hold and settle as invalid_input naming amount, writing nothing`,
        (c) => refusesAmount(c, amount, reason),
      ],
    ),
    ...BAD_ARGUMENTS.map(
      ([field, title, call]): Case<Context> => [
        `names ${field} in the invalid_input error for ${title}, writing nothing`,
        (c) => refusesArgument(c, field, call),
      ],
    ),
  ];
  const contextOf = (fx: CreditLedgerFixture): Context => {
    const prunesClosedHolds = options.prunesClosedHolds ?? true;
    return { ledger: fx.ledger, peer: fx.peer ?? fx.ledger, hooks: fx, expect: t.expect, lapseMs, prunesClosedHolds };
  };
  describeCases(t, `credit ledger contract: ${name}`, factory, contextOf, cases);
}
