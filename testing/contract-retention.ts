import { capabilityOf } from 'keygate';
import type { UsageOutcome } from 'keygate/store-kit';
import { ACCOUNT, type ContractCase, type ContractContext } from './contract-context.js';
import { olderThan, refusesBadPruneArgs } from './retention-kit.js';

// Usage's retention (`UsageStore.prune`), for the key stores that keep usage: the counts of the days
// that ended before the cutoff go, each key's last use stays.

async function prunesEndedDays({ fx, expect, create }: ContractContext): Promise<void> {
  const usage = capabilityOf(fx.store, 'usage');
  if (!usage) return;
  const [{ key }, { key: other }] = [await create(), await create()];
  const count = (keyId: string, day: string, outcome: UsageOutcome, n: number) => ({
    keyId,
    accountId: ACCOUNT,
    day,
    outcome,
    count: n,
  });
  const activity = { keyId: key.id, lastUsedAt: '2001-01-01T10:00:00.000Z', lastUsedIp: '203.0.113.1' };
  await usage.addUsage({
    counts: [
      count(key.id, '2001-01-01', 'allowed', 2),
      count(key.id, '2001-01-01', 'rate_limited', 1),
      count(key.id, '2001-01-02', 'allowed', 3),
      count(key.id, '2001-01-03', 'allowed', 4),
      count(key.id, '2026-03-01', 'allowed', 5),
      count(other.id, '2001-01-02', 'allowed', 6),
    ],
    activity: [activity],
  });
  // Noon of 2001-01-03: the days before it have ended, that day has not.
  const cutoff = Date.UTC(2001, 0, 3, 12);
  const read = async (keyId: string) =>
    (await usage.getUsage(keyId, '2000-01-01', '2030-12-31')).map((c) => `${c.day} ${c.outcome} ${c.count}`).sort();
  expect(await usage.prune({ olderThanMs: olderThan(cutoff) })).toEqual({ deleted: 4 });
  expect(await read(key.id)).toEqual(['2001-01-03 allowed 4', '2026-03-01 allowed 5']);
  expect(await read(other.id)).toEqual([]);
  expect(await usage.getActivity(key.id)).toEqual(activity);
  expect(await usage.prune({ olderThanMs: olderThan(cutoff) })).toEqual({ deleted: 0 });
  // A key whose counts all went counts again from its next flush, and prunes again.
  await usage.addUsage({ counts: [count(other.id, '2001-01-01', 'allowed', 7)], activity: [] });
  expect(await read(other.id)).toEqual(['2001-01-01 allowed 7']);
  expect(await usage.prune({ olderThanMs: olderThan(cutoff) })).toEqual({ deleted: 1 });
  expect(await read(other.id)).toEqual([]);
}

async function refusesBadArgs({ fx, expect, create }: ContractContext): Promise<void> {
  const usage = capabilityOf(fx.store, 'usage');
  if (!usage) return;
  const { key } = await create();
  // Yesterday: a negative olderThanMs let through would delete it.
  const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  await usage.addUsage({
    counts: [{ keyId: key.id, accountId: ACCOUNT, day, outcome: 'allowed', count: 1 }],
    activity: [],
  });
  await refusesBadPruneArgs(
    expect,
    (args) => usage.prune(args as never),
    () => usage.getUsage(key.id, day, day),
  );
}

/** The key-store cases of usage's retention (for a store with the `usage` capability). */
export const RETENTION_CASES: readonly ContractCase[] = [
  [
    'prunes the usage counts of every key for the days that ended before olderThanMs, and keeps its last use',
    prunesEndedDays,
  ],
  ['refuses usage prune arguments that are not { olderThanMs: a number >= 0 }, deleting nothing', refusesBadArgs],
];
