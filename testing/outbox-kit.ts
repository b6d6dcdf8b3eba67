import type { Outbox, OutboxEvent } from 'keygate';
import type { ClaimedDelivery } from 'keygate/store-kit';
import type { Expect } from './contract-kit.js';

/** What a case of the outbox contract works with: the fixture's outbox and its peer (or itself). */
export interface OutboxContext {
  readonly outbox: Outbox;
  readonly peer: Outbox;
  readonly expect: Expect;
}

/** The time the cases' events happen at. */
export const T0 = Date.UTC(2026, 10, 24, 18, 0, 0);
export const iso = (ms: number) => new Date(ms).toISOString();
export const LEASE_MS = 30_000;
export const DAY_MS = 86_400_000;

/** An endpoint of `accountId` taking `eventTypes` (default every type). */
export function endpoint(outbox: Outbox, accountId: string, eventTypes: string[] = ['*']) {
  return outbox.endpoints.create({ accountId, url: 'https://hooks.example.com/keygate', eventTypes });
}

/** Publishes a `key.revoked` event of `accountId` at `atMs`. */
export function revoked(outbox: Outbox, accountId: string, atMs = T0): Promise<OutboxEvent> {
  return outbox.publish({
    type: 'key.revoked',
    accountId,
    at: iso(atMs),
    data: { keyId: 'key_1', hint: 'mk_live_…Xy9Z' },
  });
}

/** The delivery id and lease token of `claimed`, at `nowMs`: what `complete` and `fail` are given. */
export function leaseOf(claimed: ClaimedDelivery | undefined, nowMs: number) {
  return { deliveryId: claimed?.delivery.id as string, leaseToken: claimed?.leaseToken as string, nowMs };
}

/** Claims the next due delivery at `nowMs` and records a 500 for it, retried at `retryAtMs`, disabling after a day. */
export async function failNext(outbox: Outbox, nowMs: number, retryAtMs: number, disableAfterMs = DAY_MS) {
  const [claimed] = await outbox.claim({ nowMs, leaseMs: LEASE_MS, limit: 1 });
  return outbox.fail({ ...leaseOf(claimed, nowMs), statusCode: 500, retryAtMs, disableAfterMs });
}
