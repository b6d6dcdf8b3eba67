import type { Outbox } from 'keygate';
import type { Case } from './contract-kit.js';
import { DAY_MS, endpoint, iso, LEASE_MS, leaseOf, type OutboxContext, revoked, T0 } from './outbox-kit.js';
import { OLD, olderThan, refusesBadPruneArgs } from './retention-kit.js';

// The outbox's retention (`Outbox.prune`): what ended goes, with its deliveries; what is pending stays.

const RETRY_IN_2100 = Date.UTC(2100, 0, 1);

/** Claims the due deliveries at `nowMs` (both of an event, with two endpoints) and records `outcomes` for them, in id order. */
async function settle(
  outbox: Outbox,
  nowMs: number,
  outcomes: ReadonlyArray<'delivered' | 'failed' | 'retry'>,
  atMs = nowMs,
) {
  const claimed = (await outbox.claim({ nowMs, leaseMs: LEASE_MS })).sort((a, b) =>
    a.delivery.id < b.delivery.id ? -1 : 1,
  );
  for (const [i, outcome] of outcomes.entries()) {
    const lease = leaseOf(claimed[i], atMs);
    if (outcome === 'delivered') await outbox.complete({ ...lease, statusCode: 200 });
    else
      await outbox.fail({
        ...lease,
        statusCode: 500,
        retryAtMs: outcome === 'retry' ? RETRY_IN_2100 : null,
        disableAfterMs: 100 * 365 * DAY_MS,
      });
  }
}

async function prunesEndedEvents({ outbox, peer, expect }: OutboxContext): Promise<void> {
  await endpoint(outbox, 'acct_a');
  await endpoint(outbox, 'acct_a');
  const cutoff = OLD + 150 * DAY_MS;
  // Ended before the cutoff: delivered to both endpoints; delivered to one and given up on the other;
  // published to an account with no endpoint (no delivery at all).
  const delivered = await revoked(outbox, 'acct_a', OLD);
  await settle(outbox, OLD, ['delivered', 'delivered'], OLD + 1_000);
  const gaveUp = await revoked(outbox, 'acct_a', OLD + 1);
  await settle(outbox, OLD + 1, ['delivered', 'failed'], OLD + 2_000);
  const unheard = await revoked(outbox, 'acct_none', OLD + 2);
  // Kept: one delivery still pending (a retry due in 2100); ended, but after the cutoff; published after it.
  const retrying = await revoked(outbox, 'acct_a', OLD + 3);
  await settle(outbox, OLD + 3, ['delivered', 'retry'], OLD + 3_000);
  const lateEnd = await revoked(outbox, 'acct_a', OLD + 4);
  await settle(outbox, OLD + 4, ['delivered', 'delivered'], Date.now());
  const recent = await revoked(outbox, 'acct_a', T0);
  await settle(outbox, T0, ['delivered', 'failed'], T0 + 1_000);
  // Kept: never attempted yet, and due since 2001.
  const waiting = await revoked(outbox, 'acct_a', OLD + 5);

  // Three events ended before the cutoff, with four deliveries between them.
  expect(await outbox.prune({ olderThanMs: olderThan(cutoff) })).toEqual({ deleted: 7 });
  const log = await peer.deliveries({ accountId: 'acct_a', limit: 1_000 });
  const eventsLogged = [...new Set(log.map((d) => d.eventId))].sort();
  expect(eventsLogged).toEqual([retrying.id, lateEnd.id, recent.id, waiting.id].sort());
  expect(log).toHaveLength(8);
  expect(await peer.prune({ olderThanMs: olderThan(cutoff) })).toEqual({ deleted: 0 });
  // What is pending goes out as it would have, with its event whole.
  const due = await outbox.claim({ nowMs: OLD + 6, leaseMs: LEASE_MS });
  expect(due.map((c) => c.event)).toEqual([waiting, waiting]);
  for (const c of due) await outbox.complete({ ...leaseOf(c, OLD + 7), statusCode: 200 });
  const retried = await outbox.claim({ nowMs: RETRY_IN_2100, leaseMs: LEASE_MS });
  expect(retried.map((c) => c.event)).toEqual([retrying]);
  // An event kept keeps its id: publishing it again changes nothing. A pruned one's id is free again.
  expect(
    await outbox.publish({ id: recent.id, type: 'key.revoked', accountId: 'acct_a', at: iso(T0), data: {} }),
  ).toEqual(recent);
  for (const gone of [delivered, gaveUp, unheard]) {
    const again = await outbox.publish({
      id: gone.id,
      type: 'key.created',
      accountId: gone.accountId ?? 'acct_a',
      at: iso(T0),
    });
    expect(again).toMatchObject({ id: gone.id, type: 'key.created' });
  }
}

async function prunesAllThatEnded({ outbox, peer, expect }: OutboxContext): Promise<void> {
  await endpoint(outbox, 'acct_a');
  // More events than one batch of any backend holds, every one delivered long ago.
  const count = 230;
  for (let i = 0; i < count; i++) await revoked(outbox, 'acct_a', OLD + i);
  for (;;) {
    const claimed = await outbox.claim({ nowMs: OLD + count, leaseMs: LEASE_MS, limit: 100 });
    if (claimed.length === 0) break;
    for (const c of claimed) await outbox.complete({ ...leaseOf(c, OLD + count), statusCode: 204 });
  }
  const pending = await revoked(outbox, 'acct_a', OLD);
  // Two instances at once, as two dispatchers' timers: each row goes once.
  const both = await Promise.all([outbox.prune({ olderThanMs: 0 }), peer.prune({ olderThanMs: 0 })]);
  expect(both[0].deleted + both[1].deleted).toBe(2 * count);
  const log = await outbox.deliveries({ accountId: 'acct_a', limit: 1_000 });
  expect(log.map((d) => d.eventId)).toEqual([pending.id]);
}

async function refusesBadArgs({ outbox, expect }: OutboxContext): Promise<void> {
  await endpoint(outbox, 'acct_a');
  await revoked(outbox, 'acct_a', OLD);
  await settle(outbox, OLD, ['delivered'], OLD + 1_000);
  await refusesBadPruneArgs(
    expect,
    (args) => outbox.prune(args as never),
    () => outbox.deliveries({ accountId: 'acct_a' }),
  );
}

/** The outbox's retention cases. */
export const OUTBOX_RETENTION_CASES: ReadonlyArray<Case<OutboxContext>> = [
  [
    'prunes the events whose deliveries all ended before olderThanMs, with their deliveries, and never one still pending',
    prunesEndedEvents,
  ],
  [
    'prunes every ended event, however many, in as many batches as it takes, each once across instances',
    prunesAllThatEnded,
  ],
  ['refuses prune arguments that are not { olderThanMs: a number >= 0 }, deleting nothing', refusesBadArgs],
];
