import type { Outbox, WebhookDelivery, WebhookEndpoint } from 'keygate';
import type { Case } from './contract-kit.js';
import { DAY_MS, iso, LEASE_MS, leaseOf, type OutboxContext, T0 } from './outbox-kit.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The one delivery of `endpointId` as `outbox` lists it. */
async function deliveryOf(outbox: Outbox, endpointId: string): Promise<WebhookDelivery | undefined> {
  return (await outbox.deliveries({ accountId: 'acct_full', endpointId }))[0];
}

async function keepsEveryEndpointField({ outbox, peer, expect }: OutboxContext): Promise<void> {
  const input = { accountId: 'acct_full', url: 'https://hooks.example.com/full?x=1', eventTypes: ['key.revoked'] };
  const { endpoint: hook } = await outbox.endpoints.create(input);
  expect(hook).toEqual({ id: hook.id, ...input, enabled: true, createdAt: hook.createdAt, disabledAt: null });
  expect(ISO_UTC.test(hook.createdAt)).toBe(true);
  expect(await peer.endpoints.get('acct_full', hook.id)).toEqual(hook);
  expect(await peer.endpoints.list('acct_full')).toEqual([hook]);
  const changes = {
    url: 'https://hooks.example.com/other',
    eventTypes: ['key.created', 'key.updated'],
    enabled: false,
  };
  const disabled = (await outbox.endpoints.update('acct_full', hook.id, changes)) as WebhookEndpoint;
  expect(disabled).toEqual({ ...hook, ...changes, disabledAt: disabled.disabledAt });
  expect(ISO_UTC.test(String(disabled.disabledAt))).toBe(true);
  expect(await peer.endpoints.get('acct_full', hook.id)).toEqual(disabled);
  const enabled = await outbox.endpoints.update('acct_full', hook.id, { enabled: true, eventTypes: ['*'] });
  expect(enabled).toEqual({ ...disabled, enabled: true, eventTypes: ['*'], disabledAt: null });
  expect(await peer.endpoints.list('acct_full')).toEqual([enabled]);
}

async function keepsEveryEventAndDeliveryField({ outbox, peer, expect }: OutboxContext): Promise<void> {
  const input = { accountId: 'acct_full', url: 'https://hooks.example.com/full', eventTypes: ['*'] };
  const { endpoint: hook, secret } = await outbox.endpoints.create(input);
  const data = {
    keyId: 'key_full',
    name: 'ünïcode — name',
    count: 3,
    ratio: 0.25,
    on: false,
    none: null,
    list: [1, 'a'],
  };
  const event = await outbox.publish({ type: 'key.updated', accountId: 'acct_full', at: iso(T0), data });
  expect(event).toEqual({ id: event.id, type: 'key.updated', accountId: 'acct_full', at: iso(T0), data });
  const pending = await deliveryOf(peer, hook.id);
  const createdAt = String(pending?.createdAt);
  expect(ISO_UTC.test(createdAt)).toBe(true);
  const fresh: WebhookDelivery = {
    id: `${event.id}:${hook.id}`,
    eventId: event.id,
    endpointId: hook.id,
    accountId: 'acct_full',
    eventType: 'key.updated',
    status: 'pending',
    attempts: 0,
    lastStatusCode: null,
    lastError: null,
    lastAttemptAt: null,
    nextAttemptAt: iso(T0),
    createdAt,
    deliveredAt: null,
  };
  expect(pending).toEqual(fresh);

  const [claimed] = await peer.claim({ nowMs: T0, leaseMs: LEASE_MS });
  expect(claimed?.event).toEqual(event);
  expect(claimed?.endpoint).toEqual({ ...hook, secret });
  expect(claimed?.delivery).toMatchObject({ ...fresh, nextAttemptAt: claimed?.delivery.nextAttemptAt });
  const failure = { ...leaseOf(claimed, T0 + 100), statusCode: 503, error: 'upstream said no', retryAtMs: T0 + 20_000 };
  expect(await outbox.fail({ ...failure, disableAfterMs: DAY_MS })).toEqual({ recorded: true, endpointDisabled: null });
  const failed: WebhookDelivery = {
    ...fresh,
    attempts: 1,
    lastStatusCode: 503,
    lastError: 'upstream said no',
    lastAttemptAt: iso(T0 + 100),
    nextAttemptAt: iso(T0 + 20_000),
  };
  expect(await deliveryOf(peer, hook.id)).toEqual(failed);

  const [again] = await outbox.claim({ nowMs: T0 + 20_000, leaseMs: LEASE_MS });
  expect(again?.event).toEqual(event);
  const done = { deliveryId: fresh.id, leaseToken: String(again?.leaseToken), nowMs: T0 + 20_500, statusCode: 204 };
  expect(await peer.complete(done)).toBe(true);
  expect(await deliveryOf(outbox, hook.id)).toEqual({
    ...failed,
    status: 'delivered',
    attempts: 2,
    lastStatusCode: 204,
    lastError: null,
    lastAttemptAt: iso(T0 + 20_500),
    nextAttemptAt: null,
    deliveredAt: iso(T0 + 20_500),
  });
}

async function keepsGivenUpDelivery({ outbox, peer, expect }: OutboxContext): Promise<void> {
  const { endpoint: hook } = await outbox.endpoints.create({
    accountId: 'acct_full',
    url: 'https://hooks.example.com/x',
  });
  const event = await outbox.publish({ type: 'key.revoked', accountId: 'acct_full', at: iso(T0), data: {} });
  expect(event).toEqual({ id: event.id, type: 'key.revoked', accountId: 'acct_full', at: iso(T0), data: {} });
  const [claimed] = await outbox.claim({ nowMs: T0, leaseMs: LEASE_MS });
  expect(claimed?.event).toEqual(event);
  const pending = await deliveryOf(peer, hook.id);
  const giveUp = {
    ...leaseOf(claimed, T0 + 700),
    statusCode: null,
    error: 'timeout',
    retryAtMs: null,
    disableAfterMs: DAY_MS,
  };
  expect((await peer.fail(giveUp)).recorded).toBe(true);
  expect(await deliveryOf(outbox, hook.id)).toEqual({
    ...pending,
    status: 'failed',
    attempts: 1,
    lastStatusCode: null,
    lastError: 'timeout',
    lastAttemptAt: iso(T0 + 700),
    nextAttemptAt: null,
    deliveredAt: null,
  });
}

/** Every stored field of an endpoint, an event and a delivery, through each write and a read by another instance. */
export const OUTBOX_RECORD_CASES: ReadonlyArray<Case<OutboxContext>> = [
  [
    'keeps every field of an endpoint through create, update (disable, enable) and a read by another instance',
    keepsEveryEndpointField,
  ],
  [
    'keeps every field of an event and its delivery through publish, claim, a failure and a completion',
    keepsEveryEventAndDeliveryField,
  ],
  ['keeps every field of a delivery given up with no status code', keepsGivenUpDelivery],
];
