import type { AuditEntryInput } from 'keygate';
import type { AuditContext as Context } from './audit-full-record.js';
import { type Case, fresh } from './contract-kit.js';
import { OLD, olderThan, refusesBadPruneArgs } from './retention-kit.js';

// The audit log's retention (`AuditLog.prune`): the operator's, never run by keygate itself.

const DAY_MS = 86_400_000;

function entryAt(ms: number, accountId: string, keyId?: string): AuditEntryInput {
  return {
    at: new Date(ms).toISOString(),
    accountId,
    ...(keyId && { keyId }),
    action: 'key.updated',
    actor: { type: 'cli', id: 'ops' },
  };
}

async function prunesOlderEntries({ log, peer, expect }: Context): Promise<void> {
  const [account, other] = [fresh('acct', 'prune'), fresh('acct', 'prune_other')];
  const cutoff = OLD + 150 * DAY_MS;
  await log.append(entryAt(OLD, account, 'key_a'));
  await log.append(entryAt(OLD + DAY_MS, account));
  await peer.append(entryAt(OLD, other, 'key_b'));
  const kept = [
    await log.append(entryAt(cutoff + DAY_MS, account, 'key_a')),
    await log.append(entryAt(Date.now(), account, 'key_a')),
    await peer.append(entryAt(Date.now(), other)),
  ];
  // Two instances at once, as two processes' timers: each entry goes once.
  const both = await Promise.all([
    log.prune({ olderThanMs: olderThan(cutoff) }),
    peer.prune({ olderThanMs: olderThan(cutoff) }),
  ]);
  expect(both[0].deleted + both[1].deleted).toBe(3);
  expect(await log.list({ accountId: account })).toEqual([kept[1], kept[0]]);
  expect(await peer.list({ accountId: account, keyId: 'key_a' })).toEqual([kept[1], kept[0]]);
  expect(await log.list({ accountId: other })).toEqual([kept[2]]);
  expect(await log.list({ accountId: other, keyId: 'key_b' })).toEqual([]);
  expect(await peer.prune({ olderThanMs: olderThan(cutoff) })).toEqual({ deleted: 0 });
  // The log goes on as before.
  const next = await log.append(entryAt(Date.now(), account, 'key_a'));
  expect((await log.list({ accountId: account, keyId: 'key_a', limit: 1 }))[0]).toEqual(next);
}

async function refusesBadArgs({ log, expect }: Context): Promise<void> {
  const account = fresh('acct', 'prune_bad');
  // Dated now, so that a negative olderThanMs let through would delete it, and a later prune of 2001 leaves it.
  await log.append(entryAt(Date.now(), account));
  await refusesBadPruneArgs(
    expect,
    (args) => log.prune(args as never),
    () => log.list({ accountId: account }),
  );
}

/** The audit log's retention cases. */
export const AUDIT_RETENTION_CASES: ReadonlyArray<Case<Context>> = [
  [
    'prunes the entries of every account whose at is older than olderThanMs, each once across instances, counts them, and keeps the rest',
    prunesOlderEntries,
  ],
  ['refuses prune arguments that are not { olderThanMs: a number >= 0 }, deleting nothing', refusesBadArgs],
];
