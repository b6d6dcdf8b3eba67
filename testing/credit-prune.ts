import type { CreditLedger, HoldResult, PruneArgs, PruneResult } from 'keygate';
import { type Case, type Expect, fresh, need, poll, rejection, sleep } from './contract-kit.js';
import { type CreditContext as Context, figures } from './credit-engine-cases.js';
import type { CreditLedgerHook } from './credit-hooks.js';

// The retention cases of the credit-ledger contract: `prune({ olderThanMs })` deletes the records of
// closed holds, never an open hold nor an entry, and a ledger with `pruneHoldsAfterMs` runs it by itself.

const freshAccount = (label: string) => fresh('acct', label);
// The age past which the case prunes, in milliseconds, and how long after its old holds closed it
// prunes: past that age, with room for calls on a loaded machine before the recent holds reach it.
const OLDER_THAN_MS = 1_000;
const AGED_MS = OLDER_THAN_MS + 400;
// The `pruneHoldsAfterMs` of the ledger that prunes by itself, in milliseconds.
const AUTO_AFTER_MS = 300;

type Prune = (options: PruneArgs) => Promise<PruneResult>;

function pruneOf(ledger: CreditLedger, expect: Expect): Prune {
  expect(typeof ledger.prune).toBe('function');
  return (options) => (ledger.prune as Prune).call(ledger, options);
}

function heldId(result: HoldResult, expect: Expect): string {
  expect(result.ok).toBe(true);
  return result.ok ? result.holdId : '';
}

const rows = (entries: readonly { kind: string; amount: number; balance: number }[]) =>
  entries.map((e) => [e.kind, e.amount, e.balance]);

async function prunesClosedHolds({ ledger, expect, prunesClosedHolds: keeps }: Context): Promise<void> {
  const prune = pruneOf(ledger, expect);
  // What earlier cases left closed goes first, so that the counts below are this case's own.
  await prune({ olderThanMs: 0 });
  const old = freshAccount('prune_old');
  await ledger.topUp(old, 100);
  const settled = heldId(await ledger.hold(old, 10, { keyId: 'key_prune' }), expect);
  const released = heldId(await ledger.hold(old, 20), expect);
  const open = heldId(await ledger.hold(old, 5, { ttlMs: 60_000 }), expect);
  await ledger.settle(settled, 7);
  await ledger.release(released);
  // Lapses a millisecond later; no call on `old` comes before the prune.
  const lapsed = heldId(await ledger.hold(old, 30, { ttlMs: 1 }), expect);
  await sleep(AGED_MS);
  // Closed just before the prune, on an account of their own (a call on `old` would lapse its hold now).
  const recent = freshAccount('prune_recent');
  await ledger.topUp(recent, 100);
  const recentSettled = heldId(await ledger.hold(recent, 1), expect);
  await ledger.settle(recentSettled);
  await ledger.release(heldId(await ledger.hold(recent, 2), expect));
  const recentOpen = heldId(await ledger.hold(recent, 3, { ttlMs: 60_000 }), expect);

  // The settled, the released and the lapsed hold of `old`; not its open one, nor any of `recent`.
  expect(await prune({ olderThanMs: OLDER_THAN_MS })).toEqual({ deleted: keeps ? 3 : 0 });
  const oldEntries = [
    ['charge', -7, 68],
    ['top_up', 100, 100],
  ];
  expect(rows(await ledger.entries(old))).toEqual(oldEntries);
  expect(await ledger.balance(old)).toBe(88);
  expect(await ledger.reconcile(old)).toEqual(figures(old, 93, 88, 5));
  expect(await ledger.reconcile(recent)).toEqual(figures(recent, 99, 96, 3));

  // A pruned hold's id is as an unknown one: a settle or release changes nothing and does not throw.
  for (const id of [settled, released, lapsed]) {
    const again = await ledger.settle(id);
    expect(again.charged).toBe(0);
    expect(typeof again.balance).toBe('number');
    expect(typeof (await ledger.release(id)).balance).toBe('number');
  }
  expect(await ledger.balance(old)).toBe(88);
  expect(rows(await ledger.entries(old))).toEqual(oldEntries);
  expect(await ledger.reconcile(old)).toEqual(figures(old, 93, 88, 5));

  // Nothing else is old enough; the open hold was kept whole.
  expect(await prune({ olderThanMs: OLDER_THAN_MS })).toEqual({ deleted: 0 });
  expect(await ledger.settle(open)).toEqual({ charged: 5, balance: 88 });
  // With 0, every closed hold goes: `recent`'s settled and released ones, and `open`, settled just now.
  expect(await prune({ olderThanMs: 0 })).toEqual({ deleted: keeps ? 3 : 0 });
  expect(await ledger.settle(recentSettled)).toMatchObject({ charged: 0 });
  expect(await ledger.settle(recentOpen)).toEqual({ charged: 3, balance: 96 });
  expect(await ledger.reconcile(old)).toEqual(figures(old, 88, 88, 0));
  expect(await ledger.reconcile(recent)).toEqual(figures(recent, 96, 96, 0));
  expect(await prune({ olderThanMs: 0 })).toEqual({ deleted: keeps ? 1 : 0 });
  expect(await prune({ olderThanMs: 0 })).toEqual({ deleted: 0 });
}

async function prunesWhileBilling({ ledger, peer, expect }: Context): Promise<void> {
  const prune = pruneOf(peer, expect);
  const accounts = Array.from({ length: 4 }, () => freshAccount('prune_race'));
  for (const account of accounts) await ledger.topUp(account, 1_000);
  // Each round: one hold settled and one released, then one that lapses at once (its account idle
  // until its next round, so that a call or the prune lapses it), spread over both instances.
  const round = async (i: number) => {
    const account = accounts[i % accounts.length] as string;
    const [one, other] = i % 2 ? [peer, ledger] : [ledger, peer];
    const settled = await one.hold(account, 3);
    if (settled.ok) expect((await other.settle(settled.holdId)).charged).toBe(3);
    const released = await other.hold(account, 1);
    if (released.ok) await one.release(released.holdId);
    await one.hold(account, 2, { ttlMs: 1 });
  };
  let billing = true;
  const pruning = (async () => {
    while (billing) {
      await prune({ olderThanMs: 0 });
      await sleep(1);
    }
  })();
  await Promise.all(Array.from({ length: 20 }, (_, i) => round(i)));
  billing = false;
  await pruning;
  await sleep(5);
  await prune({ olderThanMs: 0 });
  for (const account of accounts) {
    expect(await ledger.balance(account)).toBe(985);
    expect(await peer.reconcile(account)).toEqual(figures(account, 985, 985, 0));
    expect(rows(await ledger.entries(account, { limit: 1_000 })).filter(([kind]) => kind === 'charge')).toHaveLength(5);
  }
}

/** Bad options of `prune`: what the case is, the options, the field the error names and its reason. */
const BAD_PRUNE_OPTIONS: ReadonlyArray<readonly [title: string, options: unknown, field: string, reason: string]> = [
  ['no options', undefined, 'olderThanMs', 'wrong_type'],
  ['no olderThanMs', {}, 'olderThanMs', 'wrong_type'],
  ['a negative olderThanMs', { olderThanMs: -1 }, 'olderThanMs', 'out_of_range'],
  ['a NaN olderThanMs', { olderThanMs: Number.NaN }, 'olderThanMs', 'out_of_range'],
  ['an infinite olderThanMs', { olderThanMs: Number.POSITIVE_INFINITY }, 'olderThanMs', 'out_of_range'],
  ['an olderThanMs as text', { olderThanMs: '60000' }, 'olderThanMs', 'wrong_type'],
  ['an olderThan without its unit', { olderThan: 60_000 }, 'olderThan', 'unknown_option'],
  ['a number as options', 60_000, 'olderThanMs', 'wrong_type'],
];

async function refusesPruneOptions({ ledger, expect }: Context, options: unknown, field: string, reason: string) {
  const prune = pruneOf(ledger, expect);
  expect(await rejection(prune(options as PruneArgs))).toMatchObject({
    code: 'invalid_input',
    field,
    issues: [{ field, reason }],
  });
}

async function prunesByItself({ hooks, expect }: Context): Promise<void> {
  const holdState = need(hooks, 'holdState');
  const ledger = need(hooks, 'pruning')(AUTO_AFTER_MS);
  const account = freshAccount('auto_prune');
  await ledger.topUp(account, 100);
  const settled = heldId(await ledger.hold(account, 4, { keyId: 'key_auto' }), expect);
  await ledger.settle(settled);
  const open = heldId(await ledger.hold(account, 5, { ttlMs: 60_000 }), expect);
  expect(await holdState(settled)).toBe('settled');
  // Billing goes on, and nobody calls prune: the ledger does, after a hold, once the settled one is old enough.
  const bill = async () => {
    const held = await ledger.hold(account, 1);
    if (held.ok) await ledger.release(held.holdId);
    return holdState(settled);
  };
  expect(await poll(bill, (state) => state === undefined, Date.now() + AUTO_AFTER_MS + 5_000, 50)).toBe(undefined);
  expect(await holdState(open)).toBe('open');
  expect(rows(await ledger.entries(account))).toEqual([
    ['charge', -4, 96],
    ['top_up', 100, 100],
  ]);
  expect(await ledger.reconcile(account)).toEqual(figures(account, 96, 91, 5));
}

/** The retention cases every ledger runs. */
export const PRUNE_CASES: ReadonlyArray<Case<Context>> = [
  [
    'prunes holds closed longer ago than olderThanMs (settled, released, lapsed), never an open or a recent one nor an entry; a pruned id settles as an unknown one',
    prunesClosedHolds,
    30_000,
  ],
  [
    'prunes while holds are taken, settled, released and lapse on both instances, losing and adding no credit',
    prunesWhileBilling,
    60_000,
  ],
  ...BAD_PRUNE_OPTIONS.map(
    ([title, options, field, reason]): Case<Context> => [
      `refuses ${title} to prune as invalid_input naming ${field}`,
      (c) => refusesPruneOptions(c, options, field, reason),
    ],
  ),
];

/** The retention cases of each hook, run when the options name it. */
export const PRUNE_HOOK_CASES: ReadonlyArray<readonly [CreditLedgerHook, ...Case<Context>]> = [
  [
    'pruning',
    'prunes by itself, after a hold, the holds closed longer ago than its pruneHoldsAfterMs, keeping open holds and entries',
    prunesByItself,
    30_000,
  ],
];
