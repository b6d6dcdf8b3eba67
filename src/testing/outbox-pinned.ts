import type { Outbox } from 'keygate';
import type { ContractTestApi } from './contract-types.js';

// Outbox cases for decisions the other cases left open (found by mutating the memory and SQLite
// outboxes: each mutant these kill passed every other case): the order of claims and of the delivery
// log, and what switching an endpoint off and on again does to its disabledAt and failure streak.

interface Context {
  readonly outbox: Outbox;
  readonly expect: ContractTestApi['expect'];
}

const T0 = Date.UTC(2026, 10, 24, 18, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const LEASE_MS = 30_000;
const DAY_MS = 86_400_000;
// Event ids of this run that sort by their last character (23 characters after `evt_`).
const RUN = Math.random().toString(36).slice(2, 10).padEnd(8, '0');
const eventId = (n: number) => `evt_${RUN}${String(n).padStart(15, '0')}`;

async function ordersClaimsAndLog({ outbox, expect }: Context): Promise<void> {
  await outbox.endpoints.create({ accountId: 'acct_a', url: 'https://hooks.example.com/order' });
  // Published in neither due order nor id order: [id, due time].
  const events: Array<[number, number]> = [
    [2, T0],
    [3, T0 + 1],
    [1, T0 + 2],
    [0, T0],
  ];
  for (const [n, atMs] of events) {
    await outbox.publish({ id: eventId(n), type: 'key.revoked', accountId: 'acct_a', at: iso(atMs), data: {} });
  }
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
  expect((await outbox.deliveries({ accountId: 'acct_a', limit: 2 })).map((d) => d.eventId)).toEqual([
    eventId(3),
    eventId(2),
  ]);
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
  for (const atMs of [T0, T0 + 1]) {
    await outbox.publish({ type: 'key.revoked', accountId: 'acct_a', at: iso(atMs), data: {} });
  }
  const fail = async (nowMs: number) => {
    const [claimed] = await outbox.claim({ nowMs, leaseMs: LEASE_MS, limit: 1 });
    return outbox.fail({
      deliveryId: claimed?.delivery.id as string,
      leaseToken: claimed?.leaseToken as string,
      nowMs,
      statusCode: 500,
      retryAtMs: nowMs + 3 * DAY_MS,
      disableAfterMs: DAY_MS,
    });
  };
  expect((await fail(T0 + 10)).endpointDisabled).toBe(null);
  // Off and on again (someone fixed the receiver): the failures before no longer count.
  await outbox.endpoints.update('acct_a', endpoint.id, { enabled: false });
  await outbox.endpoints.update('acct_a', endpoint.id, { enabled: true });
  expect(await fail(T0 + DAY_MS + 20)).toEqual({ recorded: true, endpointDisabled: null });
  expect(await outbox.endpoints.get('acct_a', endpoint.id)).toMatchObject({ enabled: true });
}

/** The outbox cases that pin the decisions above, as `[title, run]`. */
export const OUTBOX_PINNED_CASES: ReadonlyArray<readonly [string, (c: Context) => Promise<void>]> = [
  [
    'claims the earliest due deliveries, the lower id first at a tie, at most limit; lists the log newest id first',
    ordersClaimsAndLog,
  ],
  ['stamps disabledAt when an endpoint is switched off, keeps it when off again, clears it when on', switchesOffAndOn],
  ['starts a fresh failure streak when an endpoint is switched on again', freshStreakWhenOn],
];
