import type { Outbox } from 'keygate';
import { type Case, RUN } from './contract-kit.js';
import { type OutboxContext as Context, DAY_MS, failNext, iso, LEASE_MS, leaseOf, T0 } from './outbox-kit.js';

// Outbox cases for decisions the other cases left open (found by mutating the memory and SQLite
// outboxes: each mutant these kill passed every other case): the order of claims and of the delivery
// log, and what switching an endpoint off and on again does to its disabledAt and failure streak.

// Event ids of this run that sort by their last character (23 characters after `evt_`).
const eventId = (n: number) => `evt_${RUN}${String(n).padStart(15, '0')}`;
/** Publishes a `key.revoked` event of `acct_a` with no data at `atMs`, with the id `id` when given. */
const publish = (outbox: Outbox, atMs: number, id?: string) =>
  outbox.publish({ ...(id && { id }), type: 'key.revoked', accountId: 'acct_a', at: iso(atMs), data: {} });

async function ordersClaimsAndLog({ outbox, expect }: Context): Promise<void> {
  await outbox.endpoints.create({ accountId: 'acct_a', url: 'https://hooks.example.com/order' });
  // Published in neither due order nor id order; event n is due dueMs[n] after T0.
  const dueMs = [0, 2, 0, 1];
  for (const n of [2, 3, 1, 0]) await publish(outbox, T0 + Number(dueMs[n]), eventId(n));
  // Which deliveries a claim takes (in any order): the earliest due, the lower id first among those
  // due at the same time, at most limit of them.
  const claimed = async (nowMs: number, limit: number) =>
    (await outbox.claim({ nowMs, leaseMs: LEASE_MS, limit })).map((c) => c.event.id).sort();
  expect(await claimed(T0 + 10, 1)).toEqual([eventId(0)]);
  expect(await claimed(T0 + 10, 2)).toEqual([eventId(2), eventId(3)]);
  expect(await claimed(T0 + 10, 2)).toEqual([eventId(1)]);
  // The log: newest id first.
  const log = await outbox.deliveries({ accountId: 'acct_a' });
  expect(log.map((d) => d.eventId)).toEqual([eventId(3), eventId(2), eventId(1), eventId(0)]);
  const newest = await outbox.deliveries({ accountId: 'acct_a', limit: 2 });
  expect(newest.map((d) => d.eventId)).toEqual([eventId(3), eventId(2)]);
}

async function switchesOffAndOn({ outbox, expect }: Context): Promise<void> {
  const { endpoint } = await outbox.endpoints.create({ accountId: 'acct_a', url: 'https://hooks.example.com/switch' });
  const off = await outbox.endpoints.update('acct_a', endpoint.id, { enabled: false });
  expect(off).toMatchObject({ enabled: false });
  expect(typeof off?.disabledAt).toBe('string');
  expect(await outbox.endpoints.get('acct_a', endpoint.id)).toEqual(off);
  // Switched off again: it stays off since the first time.
  expect(await outbox.endpoints.update('acct_a', endpoint.id, { enabled: false })).toEqual(off);
  const on = await outbox.endpoints.update('acct_a', endpoint.id, { enabled: true });
  expect(on).toMatchObject({ enabled: true, disabledAt: null });
  expect(await outbox.endpoints.get('acct_a', endpoint.id)).toEqual(on);
}

async function freshStreakWhenOn({ outbox, expect }: Context): Promise<void> {
  const { endpoint } = await outbox.endpoints.create({ accountId: 'acct_a', url: 'https://hooks.example.com/streak' });
  for (const atMs of [T0, T0 + 1]) await publish(outbox, atMs);
  const fail = (nowMs: number) => failNext(outbox, nowMs, nowMs + 3 * DAY_MS);
  expect((await fail(T0 + 10)).endpointDisabled).toBe(null);
  // Off and on again (someone fixed the receiver): the failures before no longer count.
  await outbox.endpoints.update('acct_a', endpoint.id, { enabled: false });
  await outbox.endpoints.update('acct_a', endpoint.id, { enabled: true });
  expect(await fail(T0 + DAY_MS + 20)).toEqual({ recorded: true, endpointDisabled: null });
  expect(await outbox.endpoints.get('acct_a', endpoint.id)).toMatchObject({ enabled: true });
}

async function otherUpdatesKeepState({ outbox, expect }: Context): Promise<void> {
  const { endpoint } = await outbox.endpoints.create({ accountId: 'acct_a', url: 'https://hooks.example.com/keep' });
  for (const atMs of [T0, T0 + 1]) await publish(outbox, atMs);
  const fail = (nowMs: number) => failNext(outbox, nowMs, nowMs + 3 * DAY_MS);
  await fail(T0 + 10);
  // A new address (or enabled: true on an enabled endpoint) is no fresh start: the streak runs on.
  const moved = await outbox.endpoints.update('acct_a', endpoint.id, { url: 'https://hooks.example.com/moved' });
  expect(moved).toMatchObject({ enabled: true, disabledAt: null });
  expect(await outbox.endpoints.update('acct_a', endpoint.id, { enabled: true })).toEqual(moved);
  const outcome = await fail(T0 + DAY_MS + 20);
  expect(outcome.endpointDisabled).toMatchObject({ id: endpoint.id, enabled: false });
}

async function removesOnlyItsOwn({ outbox, expect }: Context): Promise<void> {
  const gone = await outbox.endpoints.create({ accountId: 'acct_a', url: 'https://hooks.example.com/gone' });
  const kept = await outbox.endpoints.create({ accountId: 'acct_a', url: 'https://hooks.example.com/kept' });
  await publish(outbox, T0);
  const claims = await outbox.claim({ nowMs: T0, leaseMs: LEASE_MS });
  const mine = claims.find((c) => c.endpoint.id === gone.endpoint.id);
  expect(await outbox.complete({ ...leaseOf(mine, T0 + 1), statusCode: 200 })).toBe(true);
  await publish(outbox, T0 + 2);
  expect(await outbox.endpoints.remove('acct_a', gone.endpoint.id)).toBe(true);
  // The other endpoint's deliveries stay pending and are claimed; the delivered one stays delivered.
  const next = await outbox.claim({ nowMs: T0 + LEASE_MS + 10, leaseMs: LEASE_MS });
  expect(next.map((c) => c.endpoint.id)).toEqual([kept.endpoint.id, kept.endpoint.id]);
  const log = await outbox.deliveries({ accountId: 'acct_a', endpointId: gone.endpoint.id });
  expect(log.map((d) => d.status).sort()).toEqual(['delivered', 'failed']);
  expect(log.find((d) => d.id === mine?.delivery.id)).toMatchObject({ status: 'delivered', lastError: null });
}

async function recordsAfterSwitchedOff({ outbox, expect }: Context): Promise<void> {
  const { endpoint } = await outbox.endpoints.create({ accountId: 'acct_a', url: 'https://hooks.example.com/off' });
  await publish(outbox, T0);
  await publish(outbox, T0 + 1);
  const [first, second] = await outbox.claim({ nowMs: T0 + 10, leaseMs: LEASE_MS });
  // While these attempts run, the endpoint is switched off.
  const off = await outbox.endpoints.update('acct_a', endpoint.id, { enabled: false });
  const failure = (claimed: typeof first, nowMs: number) => {
    return { ...leaseOf(claimed, nowMs), statusCode: 500, retryAtMs: nowMs + DAY_MS, disableAfterMs: 1 };
  };
  // Recorded; a failure neither disables it again (a new disabledAt) nor switches it on.
  expect(await outbox.fail(failure(first, T0 + 20))).toEqual({ recorded: true, endpointDisabled: null });
  expect(await outbox.fail(failure(second, T0 + 30))).toEqual({ recorded: true, endpointDisabled: null });
  expect(await outbox.endpoints.get('acct_a', endpoint.id)).toEqual(off);
}

/** The outbox cases that pin the decisions above, as `[title, run]`. */
export const OUTBOX_PINNED_CASES: ReadonlyArray<Case<Context>> = [
  [
    'claims the earliest due deliveries, the lower id first at a tie, at most limit; lists the log newest id first',
    ordersClaimsAndLog,
  ],
  ['stamps disabledAt when an endpoint is switched off, keeps it when off again, clears it when on', switchesOffAndOn],
  ['starts a fresh failure streak when an endpoint is switched on again', freshStreakWhenOn],
  [
    'keeps the failure streak and disabledAt through an update that does not switch the endpoint on',
    otherUpdatesKeepState,
  ],
  ["ends only a removed endpoint's pending deliveries, and keeps its delivered ones", removesOnlyItsOwn],
  [
    'records a failed attempt whose endpoint was switched off meanwhile, and leaves it off as it was',
    recordsAfterSwitchedOff,
  ],
];
