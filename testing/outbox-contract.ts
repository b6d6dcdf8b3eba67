import { generateKey, type Outbox } from 'keygate';
import { type Case, describeCases, rejection } from './contract-kit.js';
import type { ContractTestApi } from './contract-types.js';
import { OUTBOX_RECORD_CASES } from './outbox-full-record.js';
import { DAY_MS, endpoint, failNext, iso, LEASE_MS, leaseOf, type OutboxContext, revoked, T0 } from './outbox-kit.js';
import { OUTBOX_PINNED_CASES } from './outbox-pinned.js';
import { OUTBOX_RETENTION_CASES } from './outbox-retention.js';

/**
 * An outbox for one test of {@link describeOutboxContract}: empty (a fresh schema, prefix or store),
 * since claims take due deliveries of every account.
 *
 * @example
 * const fixture: OutboxFixture = { outbox: new MemoryOutbox() };
 */
export interface OutboxFixture {
  outbox: Outbox;
  /** A second outbox over the same data, as another process would hold it. Default: `outbox`. */
  peer?: Outbox;
  /** Releases what the fixture opened (and drops its data). */
  close?(): Promise<void>;
}

async function fansOut({ outbox, expect }: OutboxContext): Promise<void> {
  const all = await endpoint(outbox, 'acct_a');
  const revocations = await endpoint(outbox, 'acct_a', ['key.revoked']);
  const creations = await endpoint(outbox, 'acct_a', ['key.created']);
  const off = await endpoint(outbox, 'acct_a');
  await outbox.endpoints.update('acct_a', off.endpoint.id, { enabled: false });
  const other = await endpoint(outbox, 'acct_b');
  const event = await revoked(outbox, 'acct_a');
  expect(event).toMatchObject({ type: 'key.revoked', accountId: 'acct_a', at: iso(T0), data: { keyId: 'key_1' } });
  expect(/^evt_[0-9a-z]{23}$/.test(event.id)).toBe(true);
  const log = await outbox.deliveries({ accountId: 'acct_a' });
  expect(log.map((d) => d.endpointId).sort()).toEqual([all.endpoint.id, revocations.endpoint.id].sort());
  for (const d of log) {
    expect(d).toMatchObject({ eventId: event.id, accountId: 'acct_a', eventType: 'key.revoked', status: 'pending' });
    expect([d.attempts, d.nextAttemptAt]).toEqual([0, iso(T0)]);
  }
  expect(await outbox.deliveries({ accountId: 'acct_b' })).toEqual([]);
  expect(await outbox.deliveries({ accountId: 'acct_a', endpointId: creations.endpoint.id })).toEqual([]);
  expect(other.endpoint.accountId).toBe('acct_b');
}

async function claimsUnderLease({ outbox, peer, expect }: OutboxContext): Promise<void> {
  const { endpoint: hook, secret } = await endpoint(outbox, 'acct_a');
  const event = await revoked(outbox, 'acct_a');
  expect(await outbox.claim({ nowMs: T0 - 1, leaseMs: LEASE_MS })).toEqual([]);
  const [claimed, ...rest] = await outbox.claim({ nowMs: T0, leaseMs: LEASE_MS });
  expect(rest).toEqual([]);
  expect(claimed?.event).toEqual(event);
  expect(claimed?.endpoint).toMatchObject({ id: hook.id, url: hook.url, secret });
  expect(claimed?.delivery).toMatchObject({ id: `${event.id}:${hook.id}`, status: 'pending' });
  expect(await peer.claim({ nowMs: T0 + LEASE_MS - 1, leaseMs: LEASE_MS })).toEqual([]);
  expect(await outbox.claim({ nowMs: T0 + 1, leaseMs: LEASE_MS })).toEqual([]);
  // The lease ends: another dispatcher may take it; the first one's outcome no longer counts.
  const [again] = await peer.claim({ nowMs: T0 + LEASE_MS, leaseMs: LEASE_MS });
  expect(again?.delivery.id).toBe(claimed?.delivery.id);
  expect(again?.leaseToken).not.toBe(claimed?.leaseToken);
  const late = { ...leaseOf(claimed, T0 + LEASE_MS + 1), statusCode: 200 };
  expect(await outbox.complete(late)).toBe(false);
  expect(await peer.complete({ ...late, leaseToken: again?.leaseToken as string })).toBe(true);
}

async function completes({ outbox, expect }: OutboxContext): Promise<void> {
  await endpoint(outbox, 'acct_a');
  await revoked(outbox, 'acct_a');
  const [claimed] = await outbox.claim({ nowMs: T0, leaseMs: LEASE_MS });
  const done = { ...leaseOf(claimed, T0 + 500), statusCode: 204 };
  expect(await outbox.complete(done)).toBe(true);
  expect(await outbox.complete(done)).toBe(false);
  const [delivery] = await outbox.deliveries({ accountId: 'acct_a' });
  expect(delivery).toMatchObject({
    status: 'delivered',
    attempts: 1,
    lastStatusCode: 204,
    lastError: null,
    lastAttemptAt: iso(T0 + 500),
    deliveredAt: iso(T0 + 500),
    nextAttemptAt: null,
  });
  expect(await outbox.claim({ nowMs: T0 + DAY_MS, leaseMs: LEASE_MS })).toEqual([]);
}

async function failsAndRetries({ outbox, expect }: OutboxContext): Promise<void> {
  await endpoint(outbox, 'acct_a');
  await revoked(outbox, 'acct_a');
  const [first] = await outbox.claim({ nowMs: T0, leaseMs: LEASE_MS });
  const failure = { ...leaseOf(first, T0 + 100), statusCode: 503, retryAtMs: T0 + 20_000, disableAfterMs: DAY_MS };
  expect(await outbox.fail(failure)).toEqual({ recorded: true, endpointDisabled: null });
  expect(await outbox.fail(failure)).toEqual({ recorded: false, endpointDisabled: null });
  const [delivery] = await outbox.deliveries({ accountId: 'acct_a' });
  expect(delivery).toMatchObject({
    status: 'pending',
    attempts: 1,
    lastStatusCode: 503,
    nextAttemptAt: iso(T0 + 20_000),
  });
  expect(await outbox.claim({ nowMs: T0 + 19_999, leaseMs: LEASE_MS })).toEqual([]);
  const [second] = await outbox.claim({ nowMs: T0 + 20_000, leaseMs: LEASE_MS });
  expect(second?.delivery.attempts).toBe(1);
  const giveUp = { ...failure, ...leaseOf(second, T0 + 21_000), statusCode: null, error: 'timeout', retryAtMs: null };
  expect((await outbox.fail(giveUp)).recorded).toBe(true);
  const [ended] = await outbox.deliveries({ accountId: 'acct_a' });
  expect(ended).toMatchObject({ status: 'failed', attempts: 2, lastStatusCode: null, lastError: 'timeout' });
  expect(ended?.nextAttemptAt).toBe(null);
  expect(await outbox.claim({ nowMs: T0 + DAY_MS, leaseMs: LEASE_MS })).toEqual([]);
}

async function disablesAfterStreak({ outbox, expect }: OutboxContext): Promise<void> {
  const { endpoint: hook } = await endpoint(outbox, 'acct_a');
  await revoked(outbox, 'acct_a');
  await revoked(outbox, 'acct_a', T0 + 1);
  const fail = (nowMs: number) => failNext(outbox, nowMs, nowMs + 1_000);
  expect((await fail(T0 + 10)).endpointDisabled).toBe(null);
  expect((await fail(T0 + DAY_MS - 1)).endpointDisabled).toBe(null);
  const outcome = await fail(T0 + DAY_MS + 10);
  expect(outcome.endpointDisabled).toMatchObject({ id: hook.id, enabled: false, disabledAt: iso(T0 + DAY_MS + 10) });
  expect(await outbox.endpoints.get('acct_a', hook.id)).toMatchObject({ enabled: false });
  // Its pending deliveries end when next reached; nothing is sent to a disabled endpoint.
  expect(await outbox.claim({ nowMs: T0 + 2 * DAY_MS, leaseMs: LEASE_MS })).toEqual([]);
  const log = await outbox.deliveries({ accountId: 'acct_a' });
  expect(log.map((d) => [d.status, d.lastError])).toEqual([
    ['failed', 'endpoint_disabled'],
    ['failed', 'endpoint_disabled'],
  ]);
}

async function successBreaksStreak({ outbox, expect }: OutboxContext): Promise<void> {
  await endpoint(outbox, 'acct_a');
  for (let i = 0; i < 3; i++) await revoked(outbox, 'acct_a', T0 + i);
  await failNext(outbox, T0 + 10, T0 + 3 * DAY_MS);
  const [b] = await outbox.claim({ nowMs: T0 + 20, leaseMs: LEASE_MS, limit: 1 });
  expect(await outbox.complete({ ...leaseOf(b, T0 + 20), statusCode: 200 })).toBe(true);
  const outcome = await failNext(outbox, T0 + DAY_MS + 30, T0 + 3 * DAY_MS);
  expect(outcome).toEqual({ recorded: true, endpointDisabled: null });
}

async function concurrentClaims({ outbox, peer, expect }: OutboxContext): Promise<void> {
  await endpoint(outbox, 'acct_a');
  await endpoint(outbox, 'acct_a');
  for (let i = 0; i < 10; i++) await revoked(outbox, 'acct_a', T0 + i);
  const claim = (i: number) => (i % 2 ? peer : outbox).claim({ nowMs: T0 + 100, leaseMs: LEASE_MS, limit: 3 });
  const rounds = await Promise.all(Array.from({ length: 10 }, (_, i) => claim(i)));
  const ids = rounds.flat().map((c) => c.delivery.id);
  expect(ids.length).toBe(20);
  expect(new Set(ids).size).toBe(20);
}

async function endpointsPerAccount({ outbox, expect }: OutboxContext): Promise<void> {
  const input = { accountId: 'acct_a', url: 'https://hooks.example.com/a', eventTypes: ['key.revoked', 'key.created'] };
  const { endpoint: hook, secret } = await outbox.endpoints.create(input);
  expect(/^whsec_[A-Za-z0-9+/]{43}=$/.test(secret)).toBe(true);
  expect(hook).toMatchObject({ ...input, enabled: true, disabledAt: null });
  expect(JSON.stringify(hook).includes(secret.slice(6))).toBe(false);
  expect(JSON.stringify(await outbox.endpoints.list('acct_a')).includes(secret.slice(6))).toBe(false);
  expect((await outbox.endpoints.list('acct_a')).map((e) => e.id)).toEqual([hook.id]);
  expect(await outbox.endpoints.list('acct_b')).toEqual([]);
  expect(await outbox.endpoints.get('acct_b', hook.id)).toBe(null);
  expect(await outbox.endpoints.update('acct_b', hook.id, { enabled: false })).toBe(null);
  expect(await outbox.endpoints.remove('acct_b', hook.id)).toBe(false);
  expect(await outbox.endpoints.get('acct_a', hook.id)).toMatchObject({ enabled: true });
  const change = { url: 'https://hooks.example.com/b', eventTypes: ['*'] };
  expect(await outbox.endpoints.update('acct_a', hook.id, change)).toMatchObject(change);
  await revoked(outbox, 'acct_a');
  expect(await outbox.endpoints.remove('acct_a', hook.id)).toBe(true);
  expect(await outbox.endpoints.get('acct_a', hook.id)).toBe(null);
  // Its pending deliveries end, at once or when a claim next reaches them.
  expect(await outbox.claim({ nowMs: T0 + DAY_MS, leaseMs: LEASE_MS })).toEqual([]);
  const [delivery] = await outbox.deliveries({ accountId: 'acct_a' });
  expect(delivery).toMatchObject({ status: 'failed', lastError: 'endpoint_removed' });
}

async function noSecret({ outbox, expect }: OutboxContext): Promise<void> {
  await endpoint(outbox, 'acct_a');
  const raw = generateKey({ mode: 'live' });
  const digest = 'ab'.repeat(32);
  await outbox.publish({
    type: 'key.leaked',
    accountId: 'acct_a',
    at: iso(T0),
    data: { keyId: 'key_1', hash: digest, secret: raw, note: `found ${raw}`, nested: { digest } },
  });
  const [claimed] = await outbox.claim({ nowMs: T0, leaseMs: LEASE_MS });
  const stored = JSON.stringify(claimed?.event);
  expect(stored.includes(raw)).toBe(false);
  expect(stored.includes(digest)).toBe(false);
  expect(claimed?.event.data).toMatchObject({ keyId: 'key_1', hash: '[redacted]', secret: '[redacted]' });
}

async function publishesAnIdOnce({ outbox, peer, expect }: OutboxContext): Promise<void> {
  await endpoint(outbox, 'acct_a');
  const id = 'evt_mhc2xg8k1a2b3c4d5e6f7g8';
  const input = { id, type: 'key.expiring', accountId: 'acct_a', at: iso(T0), data: { keyId: 'key_1', daysLeft: 7 } };
  const first = await outbox.publish(input);
  expect(first).toMatchObject({ id, type: 'key.expiring', data: { keyId: 'key_1', daysLeft: 7 } });
  // Again, from this process and another, even with other data: the stored event stands.
  expect(await peer.publish({ ...input, data: { keyId: 'key_1', daysLeft: 6 } })).toEqual(first);
  expect(await outbox.publish(input)).toEqual(first);
  const log = await outbox.deliveries({ accountId: 'acct_a' });
  expect(log.map((d) => d.eventId)).toEqual([id]);
  const claimed = await outbox.claim({ nowMs: T0, leaseMs: LEASE_MS });
  expect(claimed.map((c) => c.event)).toEqual([first]);
  const badId = { code: 'invalid_input', field: 'id' };
  expect(await rejection(outbox.publish({ ...input, id: 'evt_NOT-AN-ID' }))).toMatchObject(badId);
}

async function refusesBadInput({ outbox, expect }: OutboxContext): Promise<void> {
  const bad: Array<[field: string, call: () => Promise<unknown>]> = [
    ['type', () => outbox.publish({ type: 'Key Revoked', accountId: 'acct_a' })],
    ['accountId', () => outbox.publish({ type: 'key.revoked', accountId: null })],
    ['url', () => outbox.endpoints.create({ accountId: 'acct_a', url: 'ftp://example.com' })],
    ['eventTypes', () => outbox.endpoints.create({ accountId: 'acct_a', url: 'https://example.com', eventTypes: [] })],
    ['leaseMs', () => outbox.claim({ nowMs: T0, leaseMs: 0 })],
  ];
  for (const [field, call] of bad) expect(await rejection(call())).toMatchObject({ code: 'invalid_input', field });
  expect(await outbox.endpoints.list('acct_a')).toEqual([]);
  expect(await outbox.deliveries({ accountId: 'acct_a' })).toEqual([]);
}

// A few of the internal targets an endpoint may not point at (the whole list is src/outbox/targets.ts).
const INTERNAL_URLS = [
  'http://127.0.0.1:8080/',
  'http://0x7f000001/',
  'http://[::1]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.1/',
  'http://localhost:3000/',
  'http://metadata.google.internal/',
  'http://[::ffff:127.0.0.1]/',
];

async function refusesInternalTargets({ outbox, expect }: OutboxContext): Promise<void> {
  for (const url of INTERNAL_URLS) {
    expect(await rejection(outbox.endpoints.create({ accountId: 'acct_a', url }))).toMatchObject({
      code: 'invalid_input',
      field: 'url',
    });
  }
  expect(await outbox.endpoints.list('acct_a')).toEqual([]);
  const { endpoint } = await outbox.endpoints.create({ accountId: 'acct_a', url: 'https://hooks.example.com/a' });
  for (const url of INTERNAL_URLS) {
    expect(await rejection(outbox.endpoints.update('acct_a', endpoint.id, { url }))).toMatchObject({
      code: 'invalid_input',
      field: 'url',
    });
  }
  expect(await outbox.endpoints.get('acct_a', endpoint.id)).toEqual(endpoint);
  // The operator's development switch, never an account's: it admits them.
  const dev = { allowPrivateNetworks: true };
  const local = await outbox.endpoints.create({ accountId: 'acct_a', url: 'http://127.0.0.1:8080/' }, dev);
  expect(local.endpoint.url).toBe('http://127.0.0.1:8080/');
  const moved = await outbox.endpoints.update('acct_a', endpoint.id, { url: 'http://[::1]:9000/' }, dev);
  expect(moved?.url).toBe('http://[::1]:9000/');
  const typo = { allowPrivateNetwork: true } as never;
  expect(
    await rejection(outbox.endpoints.create({ accountId: 'acct_a', url: 'http://10.0.0.1/' }, typo)),
  ).toMatchObject({ code: 'invalid_input', field: 'allowPrivateNetwork' });
  expect((await outbox.endpoints.list('acct_a')).length).toBe(2);
}

/**
 * The contract every outbox meets (see `Outbox`): publishing fans an event out to the matching
 * enabled endpoints of its account; claims hold deliveries under a lease that a second claimer
 * cannot take until it ends; outcomes are recorded only under the lease's token; retries, giving up,
 * and disabling an endpoint after an unbroken streak of failures; endpoints kept per account; an
 * event published again with its id stored once; no secret stored in an event; no endpoint on an
 * internal host (loopback, private, metadata...) unless the operator allows it; `prune` deleting the
 * events that ended before its cutoff with their deliveries, never one with a delivery pending, in
 * batches. Give each test an empty outbox.
 *
 * @example
 * import { describeOutboxContract } from 'keygate/testing';
 * describeOutboxContract('MyOutbox', async () => ({ outbox: new MyOutbox(client) }), { describe, it, expect, beforeEach, afterEach });
 */
export function describeOutboxContract(name: string, factory: () => Promise<OutboxFixture>, t: ContractTestApi): void {
  const cases: ReadonlyArray<Case<OutboxContext>> = [
    ...OUTBOX_PINNED_CASES,
    ['publishes an event with one pending delivery per enabled endpoint of its account that takes its type', fansOut],
    ['claims a due delivery under a lease that no second claim takes until it ends', claimsUnderLease],
    ['completes a delivery once, under its lease token, and never claims it again', completes],
    ['records a failure, retries at the time given, and gives up with retryAtMs null', failsAndRetries],
    [
      'disables an endpoint whose failures run unbroken for disableAfterMs, and ends its deliveries',
      disablesAfterStreak,
    ],
    ['a delivered attempt breaks the failure streak', successBreaksStreak],
    ['hands each delivery to one of many concurrent claims', concurrentClaims],
    [
      "keeps endpoints per account, shows the secret only at creation, and ends a removed endpoint's deliveries",
      endpointsPerAccount,
    ],
    ['stores an event published with an id it already holds once, and returns the stored one', publishesAnIdOnce],
    ['stores no secret: a key, a digest or a secret-named member in an event is redacted', noSecret],
    ['refuses bad input as invalid_input naming the field, writing nothing', refusesBadInput],
    [
      'refuses an endpoint URL on a loopback, private, link-local or metadata host, writing nothing, unless the operator allows private networks',
      refusesInternalTargets,
    ],
    ...OUTBOX_RECORD_CASES,
    ...OUTBOX_RETENTION_CASES,
  ];
  const contextOf = (fx: OutboxFixture) => ({ outbox: fx.outbox, peer: fx.peer ?? fx.outbox, expect: t.expect });
  describeCases(t, `outbox contract: ${name}`, factory, contextOf, cases);
}
