import { capabilityOf, type KeygateEvent, KeyManager, MemoryKeyStore } from 'keygate';
import type { Outbox } from 'keygate/store-kit';
import { createWebhookDispatcher, DEFAULT_RETRY, MemoryOutbox, verifyWebhook } from 'keygate/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from './support/receiver.js';

const T0 = Date.UTC(2026, 10, 24, 18, 0, 0);
// The receivers listen on 127.0.0.1: the operator's development switch lets endpoints and sends reach them.
const LOCAL = { allowPrivateNetworks: true } as const;
const HOUR = 3_600_000;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

function setUp(path: string) {
  let now = T0;
  const clock = () => now;
  const store = new MemoryKeyStore({ outbox: new MemoryOutbox() });
  const outbox = capabilityOf(store, 'outbox') as Outbox;
  const keys = new KeyManager({ store, clock });
  return {
    outbox,
    keys,
    clock,
    advance: (ms: number) => (now += ms),
    at: (ms: number) => (now = ms),
    url: receiver.url(path),
  };
}

const receivedAt = (path: string) => receiver.received.filter((r) => r.path === path);

describe('a webhook dispatcher over a MemoryKeyStore', () => {
  it('delivers every key event of the account, signed; the receiver verifies each and a tampered body fails', async () => {
    const { outbox, keys, clock, url } = setUp('/all');
    const { secret } = await outbox.endpoints.create({ accountId: 'acct_1', url }, LOCAL);
    await outbox.endpoints.create({ accountId: 'acct_2', url: receiver.url('/other-account') }, LOCAL);
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    await keys.update(key.id, { name: 'ci-2' });
    await keys.suspend(key.id, { reason: 'unpaid' });
    await keys.resume(key.id);
    const { key: next } = await keys.rotate(key.id);
    await keys.revoke(key.id);
    await outbox.publish({
      type: 'credits.low',
      accountId: 'acct_1',
      at: new Date(clock()).toISOString(),
      data: { balance: 40, threshold: 50 },
    });

    const dispatcher = createWebhookDispatcher({ outbox, clock, ...LOCAL });
    expect(await dispatcher.runOnce()).toEqual({ claimed: 7, delivered: 7, failed: 0, gaveUp: 0 });
    const got = receivedAt('/all');
    const events = await Promise.all(
      got.map((r) => verifyWebhook({ secret, headers: r.headers as never, body: r.body, nowMs: clock() })),
    );
    expect(events.map((e) => e.type).sort()).toEqual(
      [
        'credits.low',
        'key.created',
        'key.resumed',
        'key.revoked',
        'key.rotated',
        'key.suspended',
        'key.updated',
      ].sort(),
    );
    expect(events.find((e) => e.type === 'key.rotated')?.data).toMatchObject({ keyId: key.id, newKeyId: next.id });
    expect(events.find((e) => e.type === 'key.suspended')?.data).toMatchObject({ reason: 'unpaid' });
    for (const [i, r] of got.entries()) {
      expect(r.headers['webhook-id']).toBe(events[i]?.id);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body).not.toMatch(/"hash"|mk_live_[0-9A-Za-z]{20,}/);
    }
    const tampered = (got[0] as (typeof got)[0]).body.replace('acct_1', 'acct_9');
    await expect(
      verifyWebhook({ secret, headers: got[0]?.headers as never, body: tampered, nowMs: clock() }),
    ).rejects.toMatchObject({ code: 'invalid_signature' });
    expect(receivedAt('/other-account')).toEqual([]);
    expect(await dispatcher.runOnce()).toEqual({ claimed: 0, delivered: 0, failed: 0, gaveUp: 0 });
    const log = await outbox.deliveries({ accountId: 'acct_1' });
    expect(log.every((d) => d.status === 'delivered' && d.attempts === 1 && d.lastStatusCode === 204)).toBe(true);
  });

  it('sends only the event types an endpoint takes', async () => {
    const { outbox, keys, clock, url } = setUp('/revocations');
    await outbox.endpoints.create({ accountId: 'acct_1', url, eventTypes: ['key.revoked'] }, LOCAL);
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    await keys.revoke(key.id);
    await createWebhookDispatcher({ outbox, clock, ...LOCAL }).runOnce();
    expect(receivedAt('/revocations').map((r) => JSON.parse(r.body).type)).toEqual(['key.revoked']);
  });

  it('retries a failing endpoint with exponential backoff and full jitter, gives up after 24 hours, and disables the endpoint', async () => {
    const { outbox, keys, clock, at, url } = setUp('/failing');
    receiver.status = (r) => (r.path === '/failing' ? 503 : 204);
    const failing = await outbox.endpoints.create({ accountId: 'acct_1', url }, LOCAL);
    const watcher = await outbox.endpoints.create(
      {
        accountId: 'acct_1',
        url: receiver.url('/watcher'),
        eventTypes: ['webhook.endpoint_disabled'],
      },
      LOCAL,
    );
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    const draws = [0.999, 0, 0.5, 0.999, 0.25];
    let draw = 0;
    const seen: KeygateEvent[] = [];
    const dispatcher = createWebhookDispatcher({
      outbox,
      clock,
      ...LOCAL,
      random: () => draws[draw++ % draws.length] as number,
      onEvent: (e) => {
        seen.push(e);
      },
    });
    const attempts: number[] = [];
    for (let round = 0; round < 200; round++) {
      const report = await dispatcher.runOnce();
      if (report.claimed > 0) attempts.push(clock());
      const [delivery] = await outbox.deliveries({ accountId: 'acct_1', endpointId: failing.endpoint.id });
      if (delivery?.status !== 'pending') break;
      at(Date.parse(delivery.nextAttemptAt as string));
    }
    // Each wait lies in [0, min(6 h, 30 s * 2^(n-1))), as drawn.
    for (let n = 1; n < attempts.length; n++) {
      const ceiling = Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseDelayMs * 2 ** (n - 1));
      const wait = (attempts[n] as number) - (attempts[n - 1] as number);
      expect(wait).toBe(Math.floor((draws[(n - 1) % draws.length] as number) * ceiling));
      expect(wait).toBeLessThan(ceiling);
    }
    const [ended] = await outbox.deliveries({ accountId: 'acct_1', endpointId: failing.endpoint.id });
    expect(ended).toMatchObject({
      status: 'failed',
      attempts: attempts.length,
      lastStatusCode: 503,
      nextAttemptAt: null,
    });
    expect((attempts.at(-1) as number) - T0).toBeLessThanOrEqual(24 * HOUR);
    expect((attempts.at(-1) as number) - T0).toBeGreaterThan(18 * HOUR);
    // Its delivery gave up after failing for a day, which disabled it; the account's other endpoint heard of it.
    expect(await outbox.endpoints.get('acct_1', failing.endpoint.id)).toMatchObject({ enabled: false });
    expect(seen).toEqual([
      expect.objectContaining({
        type: 'webhook.endpoint_disabled',
        accountId: 'acct_1',
        endpointId: failing.endpoint.id,
      }),
    ]);
    await dispatcher.runOnce();
    const notices = receivedAt('/watcher');
    expect(notices).toHaveLength(1);
    const notice = await verifyWebhook({
      secret: watcher.secret,
      headers: notices[0]?.headers as never,
      body: notices[0]?.body as string,
      nowMs: clock(),
    });
    expect(notice).toMatchObject({ type: 'webhook.endpoint_disabled', data: { endpointId: failing.endpoint.id } });
    receiver.status = () => 204;
  });

  it('counts a timeout, a refused connection and a redirect as failures to retry', async () => {
    const { outbox, keys, clock, url } = setUp('/slow');
    await outbox.endpoints.create({ accountId: 'acct_1', url }, LOCAL);
    const closed = await startReceiver();
    const closedUrl = closed.url('/closed');
    await closed.close();
    await outbox.endpoints.create({ accountId: 'acct_1', url: closedUrl }, LOCAL);
    await outbox.endpoints.create({ accountId: 'acct_1', url: receiver.url('/redirect') }, LOCAL);
    receiver.status = (r) => (r.path === '/redirect' ? 302 : 204);
    receiver.delayMs = (r) => (r.path === '/slow' ? 300 : 0);
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    const report = await createWebhookDispatcher({ outbox, clock, timeoutMs: 100, leaseMs: 1_000, ...LOCAL }).runOnce();
    receiver.delayMs = () => 0;
    receiver.status = () => 204;
    expect(report).toEqual({ claimed: 3, delivered: 0, failed: 3, gaveUp: 0 });
    const log = await outbox.deliveries({ accountId: 'acct_1' });
    const outcomes = log.map((d) => [d.lastError, d.lastStatusCode]);
    expect(outcomes).toHaveLength(3);
    expect(outcomes).toEqual(
      expect.arrayContaining([
        ['http_3xx', 302],
        ['timeout', null],
        ['connection_failed', null],
      ]),
    );
    expect(log.every((d) => d.status === 'pending' && d.attempts === 1)).toBe(true);
  });

  it('runs in the background with start and stops with stop', async () => {
    const { outbox, keys, url } = setUp('/background');
    await outbox.endpoints.create({ accountId: 'acct_1', url }, LOCAL);
    const dispatcher = createWebhookDispatcher({ outbox, ...LOCAL });
    dispatcher.start({ intervalMs: 10 });
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    await expect.poll(() => receivedAt('/background').length).toBe(1);
    await dispatcher.stop();
  });

  it('prunes once started: at start, then once an hour by its clock, the events that ended more than retainMs ago, never one still pending', async () => {
    const { outbox, keys, clock, advance, url } = setUp('/retention');
    const previous = receiver.status;
    receiver.status = (r) => (r.path === '/retention-down' ? 503 : previous(r));
    await outbox.endpoints.create({ accountId: 'acct_1', url }, LOCAL);
    await outbox.endpoints.create({ accountId: 'acct_2', url: receiver.url('/retention-down') }, LOCAL);
    const logOf = async (accountId: string) => (await outbox.deliveries({ accountId })).map((d) => d.status);
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    await keys.create({ accountId: 'acct_2', name: 'ci', mode: 'live' });
    // Events of 2026-11-24 (the clock's): ended more than two hours before now.
    const dispatcher = createWebhookDispatcher({ outbox, clock, random: () => 0.5, retainMs: 2 * HOUR, ...LOCAL });
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 1, failed: 1 });
    dispatcher.start({ intervalMs: 10 });
    await dispatcher.stop(); // waits for the first run and its prune
    expect(await logOf('acct_1')).toEqual([]);
    expect(await logOf('acct_2')).toEqual(['pending']);
    // Within the hour, by the clock, no second prune.
    await keys.update((await keys.list('acct_1'))[0]?.id as string, { name: 'ci-2' });
    expect((await dispatcher.runOnce()).delivered).toBe(1);
    dispatcher.start({ intervalMs: 10 });
    await dispatcher.stop();
    expect(await logOf('acct_1')).toEqual(['delivered']);
    advance(HOUR);
    dispatcher.start({ intervalMs: 10 });
    await dispatcher.stop();
    expect(await logOf('acct_1')).toEqual([]);
    expect(await logOf('acct_2')).toEqual(['pending']);
    receiver.status = previous;
  });

  it('keeps what ended for 7 days by default, and everything with retainMs false', async () => {
    const { outbox, keys, clock, at, url } = setUp('/retention-default');
    await outbox.endpoints.create({ accountId: 'acct_1', url }, LOCAL);
    const [eightDaysAgo, sixDaysAgo] = [Date.now() - 8 * 24 * HOUR, Date.now() - 6 * 24 * HOUR];
    for (const when of [eightDaysAgo, sixDaysAgo]) {
      at(when);
      await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
      await createWebhookDispatcher({ outbox, clock, ...LOCAL }).runOnce();
    }
    const delivered = async () => (await outbox.deliveries({ accountId: 'acct_1' })).map((d) => d.deliveredAt);
    const keeping = createWebhookDispatcher({ outbox, clock, retainMs: false, ...LOCAL });
    keeping.start({ intervalMs: 10 });
    await keeping.stop();
    expect(await delivered()).toEqual([new Date(sixDaysAgo).toISOString(), new Date(eightDaysAgo).toISOString()]);
    const pruning = createWebhookDispatcher({ outbox, clock, ...LOCAL });
    pruning.start({ intervalMs: 10 });
    await pruning.stop();
    expect(await delivered()).toEqual([new Date(sixDaysAgo).toISOString()]);
  });

  it('refuses bad options as invalid_input naming the option', () => {
    const outbox = capabilityOf(new MemoryKeyStore({ outbox: new MemoryOutbox() }), 'outbox') as Outbox;
    expect(() => createWebhookDispatcher({ outbox: {} as Outbox })).toThrow(
      expect.objectContaining({ field: 'outbox' }),
    );
    expect(() => createWebhookDispatcher({ outbox, timeoutMs: 5_000, leaseMs: 5_000 })).toThrow(
      expect.objectContaining({ field: 'leaseMs' }),
    );
    expect(() => createWebhookDispatcher({ outbox, retry: { baseDelayMs: -1 } })).toThrow(
      expect.objectContaining({ field: 'retry.baseDelayMs' }),
    );
    for (const retainMs of [false, 1, 30 * 24 * HOUR] as const) {
      expect(() => createWebhookDispatcher({ outbox, retainMs })).not.toThrow();
    }
    for (const retainMs of [0, -1, 1.5, '7d', true, Number.POSITIVE_INFINITY]) {
      expect(() => createWebhookDispatcher({ outbox, retainMs: retainMs as never })).toThrow(
        expect.objectContaining({ code: 'invalid_input', field: 'retainMs' }),
      );
    }
  });
});
