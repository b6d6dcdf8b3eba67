// Notifications no key write raises: key.expiring and key.rotation_due from a sweep, published once
// each however often and from however many sweepers; credits and leak events forwarded from onEvent;
// ratelimit.exceeded once per key per window from onResult; all delivered through the dispatcher.
import { PGlite } from '@electric-sql/pglite';
import {
  type AuthResult,
  authenticate,
  capabilityOf,
  type KeygateEvent,
  KeyManager,
  MemoryCreditLedger,
  MemoryKeyStore,
  MemoryRateLimiter,
} from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import type { Outbox } from 'keygate/store-kit';
import {
  createWebhookDispatcher,
  keyNotifications,
  MemoryOutbox,
  outboxEvents,
  stableEventId,
  verifyWebhook,
} from 'keygate/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from './support/receiver.js';

const T0 = Date.UTC(2026, 10, 24, 18, 0, 0);
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
let receiver: Receiver;
let pglite: PGlite | undefined;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await pglite?.close();
});

function memory() {
  let now = T0;
  const clock = () => now;
  const store = new MemoryKeyStore({ outbox: new MemoryOutbox() });
  const outbox = capabilityOf(store, 'outbox') as Outbox;
  const keys = new KeyManager({ store, clock, rotationDays: 30 });
  return { store, outbox, keys, clock, advance: (ms: number) => (now += ms) };
}

/** The events of `type` the account's endpoint got a delivery of, oldest first. */
async function delivered(outbox: Outbox, type: string, accountId = 'acct_1') {
  const log = await outbox.deliveries({ accountId, limit: 1_000 });
  return log.filter((d) => d.eventType === type).reverse();
}

describe('keyNotifications: the sweep', () => {
  it('sends key.expiring once for the 7-day window across runs and sweepers, then once for the 1-day window', async () => {
    const { outbox, keys, clock, advance } = memory();
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    const expiresAt = iso(T0 + 6 * DAY);
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live', expiresAt });
    await keys.create({ accountId: 'acct_1', name: 'far', mode: 'live', expiresAt: iso(T0 + 20 * DAY) });
    const accounts = async () => ['acct_1'];
    const a = keyNotifications({ manager: keys, outbox, accounts, clock });
    const b = keyNotifications({ manager: keys, outbox, accounts, clock });

    const first = await a.runOnce();
    expect(first.keys).toBe(2);
    expect(first.events.map((e) => [e.type, e.data])).toEqual([
      ['key.expiring', { keyId: key.id, hint: key.hint, expiresAt, daysLeft: 7 }],
    ]);
    // The event is dated when the key entered the window: its creation, here (it had 6 days left).
    expect(first.events[0]?.at).toBe(iso(T0));
    await a.runOnce();
    advance(DAY);
    await b.runOnce();
    expect((await delivered(outbox, 'key.expiring')).map((d) => d.eventId)).toEqual([first.events[0]?.id]);

    advance(4 * DAY + 12 * 3_600_000); // 12 hours left
    const late = await b.runOnce();
    await a.runOnce();
    expect(late.events.map((e) => e.data.daysLeft)).toEqual([1]);
    expect(late.events[0]?.at).toBe(iso(T0 + 5 * DAY));
    expect((await delivered(outbox, 'key.expiring')).length).toBe(2);

    advance(DAY); // expired: nothing more
    expect((await a.runOnce()).events).toEqual([]);
  });

  it('starts over when a key gets a new expiresAt, and skips revoked keys', async () => {
    const { outbox, keys, clock, advance } = memory();
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live', expiresAt: iso(T0 + 3 * DAY) });
    const { key: gone } = await keys.create({
      accountId: 'acct_1',
      name: 'gone',
      mode: 'live',
      expiresAt: iso(T0 + DAY),
    });
    await keys.revoke(gone.id);
    const sweep = keyNotifications({ manager: keys, outbox, accounts: () => ['acct_1'], clock });
    await sweep.runOnce();
    await keys.update(key.id, { expiresAt: iso(T0 + 5 * DAY) });
    advance(1_000);
    await sweep.runOnce();
    const got = await delivered(outbox, 'key.expiring');
    expect(got.map((d) => d.eventId === got[0]?.eventId)).toEqual([true, false]);
    const claimed = await outbox.claim({ nowMs: clock(), leaseMs: 1_000, limit: 100 });
    const expiring = claimed.filter((c) => c.event.type === 'key.expiring').map((c) => c.event.data);
    expect(expiring.map((d) => d.keyId)).toEqual([key.id, key.id]);
    expect(expiring.map((d) => d.expiresAt).sort()).toEqual([iso(T0 + 3 * DAY), iso(T0 + 5 * DAY)]);
  });

  it('sends key.rotation_due once, dated when the key reached the rotation age', async () => {
    const { outbox, keys, clock, advance } = memory();
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    const { key } = await keys.create({ accountId: 'acct_1', name: 'old', mode: 'live' });
    const sweep = keyNotifications({ manager: keys, outbox, accounts: () => ['acct_1'], clock });
    advance(29 * DAY);
    expect((await sweep.runOnce()).events).toEqual([]);
    advance(2 * DAY);
    const { events } = await sweep.runOnce();
    advance(DAY);
    await sweep.runOnce();
    expect(events.map((e) => [e.type, e.at, e.data])).toEqual([
      ['key.rotation_due', iso(T0 + 30 * DAY), { keyId: key.id, hint: key.hint, createdAt: iso(T0), rotationDays: 30 }],
    ]);
    expect((await delivered(outbox, 'key.rotation_due')).length).toBe(1);
  });

  it('sends key.rotation_due once though the dispatcher pruned it: a sweep publishes an event only within publishWithinMs of its at', async () => {
    const { outbox, keys, clock, advance } = memory();
    await outbox.endpoints.create(
      { accountId: 'acct_1', url: receiver.url('/rotation-pruned'), eventTypes: ['key.rotation_due'] },
      { allowPrivateNetworks: true },
    );
    // The key reaches its rotation age 8 days ago, by the real clock the outbox prunes by; a sweep an hour later sends it.
    advance(Date.now() - 38 * DAY - T0);
    await keys.create({ accountId: 'acct_1', name: 'old', mode: 'live' });
    const sweep = keyNotifications({ manager: keys, outbox, accounts: () => ['acct_1'], clock });
    const dispatcher = createWebhookDispatcher({ outbox, clock, allowPrivateNetworks: true });
    advance(30 * DAY + 3_600_000);
    expect((await sweep.runOnce()).events.map((e) => e.type)).toEqual(['key.rotation_due']);
    expect((await dispatcher.runOnce()).delivered).toBe(1);
    // The dispatcher's retention (7 days) deletes it (with its delivery, and the key's key.created); the
    // sweeps from 7 days after it became due, when a retention of 7 days may have deleted it, never send it again.
    expect(await outbox.prune({ olderThanMs: 7 * DAY })).toEqual({ deleted: 3 });
    advance(7 * DAY - 3_600_000);
    for (let day = 0; day < 3; day++) {
      expect((await sweep.runOnce()).events).toEqual([]);
      advance(DAY);
    }
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 0 });
    expect(receiver.received.filter((r) => r.path === '/rotation-pruned')).toHaveLength(1);
  });

  it('refuses bad options as invalid_input naming the field', () => {
    const { outbox, keys } = memory();
    expect(() => keyNotifications({ manager: keys, outbox } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'accounts' }),
    );
    expect(() => keyNotifications({ manager: keys, outbox, accounts: () => [], expiringDays: [0] })).toThrow(
      expect.objectContaining({ field: 'expiringDays' }),
    );
    expect(() => keyNotifications({ manager: keys, outbox, accounts: () => [], publishWithinMs: DAY })).not.toThrow();
    for (const publishWithinMs of [0, 1.5, '7d']) {
      expect(() => keyNotifications({ manager: keys, outbox, accounts: () => [], publishWithinMs } as never)).toThrow(
        expect.objectContaining({ code: 'invalid_input', field: 'publishWithinMs' }),
      );
    }
    expect(() => stableEventId('', T0)).toThrow(expect.objectContaining({ field: 'key' }));
  });

  it('runs on a timer until stopped', async () => {
    const { outbox, keys, clock } = memory();
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live', expiresAt: iso(T0 + DAY / 2) });
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    let runs = 0;
    const sweep = keyNotifications({
      manager: keys,
      outbox,
      clock,
      accounts: () => {
        runs++;
        return ['acct_1'];
      },
    });
    sweep.start({ intervalMs: 5 });
    while (runs < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await sweep.stop();
    const after = runs;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(runs).toBe(after);
    expect((await delivered(outbox, 'key.expiring')).length).toBe(1);
  });
});

describe('keyNotifications over one PostgreSQL database (PGlite), two sweepers as two processes', () => {
  it('stores each notification once', async () => {
    pglite = await PGlite.create();
    let now = T0;
    const clock = () => now;
    const stores = [0, 1].map(() => new PostgresKeyStore({ client: pglite as PGlite, schema: 'notify' }));
    await stores[0]?.migrate();
    const managers = stores.map((store) => new KeyManager({ store, clock, rotationDays: 30 }));
    const outboxes = stores.map((store) => capabilityOf(store, 'outbox') as Outbox);
    const [outbox] = outboxes as [Outbox];
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    await managers[0]?.create({ accountId: 'acct_1', name: 'ci', mode: 'live', expiresAt: iso(T0 + 6 * DAY) });
    const sweeps = [0, 1].map((i) =>
      keyNotifications({
        manager: managers[i] as KeyManager,
        outbox: outboxes[i] as Outbox,
        accounts: () => ['acct_1'],
        clock,
      }),
    );
    await Promise.all(sweeps.map((s) => s.runOnce()));
    await Promise.all(sweeps.map((s) => s.runOnce()));
    expect((await delivered(outbox, 'key.expiring')).length).toBe(1);
    now += 5 * DAY + 1;
    await Promise.all(sweeps.map((s) => s.runOnce()));
    now += 30 * DAY;
    await Promise.all(sweeps.map((s) => s.runOnce()));
    const log = await outbox.deliveries({ accountId: 'acct_1' });
    expect(log.map((d) => d.eventType).sort()).toEqual([
      'key.created',
      'key.expiring',
      'key.expiring',
      'key.rotation_due',
    ]);
  });
});

describe('outboxEvents: in-process events into the outbox', () => {
  it('publishes ratelimit.exceeded once per key per window during a 429 storm', async () => {
    const { store, outbox, keys, clock, advance } = memory();
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    const { key, secret } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    const events = outboxEvents(outbox, { clock });
    const pending: Promise<unknown>[] = [];
    const options = {
      rateLimit: { limiter: new MemoryRateLimiter({ clock }), default: { limit: 2, windowMs: 60_000 } },
      onResult: (result: AuthResult) => void pending.push(events.onResult(result)),
    };
    const storm = async (n: number) => {
      const codes: (string | number)[] = [];
      for (let i = 0; i < n; i++) {
        const r = await authenticate({ headers: { 'x-api-key': secret } }, store, options);
        codes.push(r.ok ? 200 : r.code);
        advance(100);
      }
      await Promise.all(pending);
      return codes;
    };
    expect(await storm(20)).toEqual([200, 200, ...Array(18).fill('rate_limited')]);
    let got = await delivered(outbox, 'ratelimit.exceeded');
    expect(got.length).toBe(1);
    advance(60_000);
    await storm(10);
    got = await delivered(outbox, 'ratelimit.exceeded');
    expect(got.length).toBe(2);
    const [claimed] = (await outbox.claim({ nowMs: clock(), leaseMs: 1_000, limit: 100 })).filter(
      (c) => c.event.type === 'ratelimit.exceeded',
    );
    expect(claimed?.event.data).toMatchObject({ keyId: key.id, hint: key.hint, limit: 2, windowMs: 60_000 });
    expect(JSON.stringify(claimed?.event)).not.toContain(secret);
  });

  it('forwards credits.low and key.leaked, and not the key events a write already stored', async () => {
    const { store, outbox, keys } = memory();
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    const { key, secret } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    const ledger = new MemoryCreditLedger();
    await ledger.topUp('acct_1', 10);
    const events = outboxEvents(outbox);
    const pending: Promise<unknown>[] = [];
    const onEvent = (event: KeygateEvent) => void pending.push(events.onEvent(event));
    for (let i = 0; i < 3; i++) {
      await authenticate({ headers: { 'x-api-key': secret } }, store, {
        credits: { ledger, cost: 3, lowBalance: 5, onEvent },
      });
    }
    await Promise.all(pending);
    const at = new Date().toISOString();
    const base = { keyId: key.id, accountId: 'acct_1', hint: key.hint, at };
    expect(await events.onEvent({ ...base, type: 'key.leaked', action: 'revoke', source: 'commit' })).not.toBeNull();
    expect(await events.onEvent({ ...base, type: 'key.revoked' })).toBeNull();
    expect(await events.onEvent({ ...base, accountId: null, type: 'credits.low' })).toBeNull();
    const log = await outbox.deliveries({ accountId: 'acct_1' });
    expect(log.map((d) => d.eventType).sort()).toEqual(['credits.low', 'key.created', 'key.leaked']);
    const [low] = (await outbox.claim({ nowMs: Date.now() + DAY, leaseMs: 1_000, limit: 100 }))
      .map((c) => c.event)
      .filter((e) => e.type === 'credits.low');
    expect(low?.data).toMatchObject({ keyId: key.id, balance: 4, threshold: 5 });
  });
});

describe('end to end', () => {
  it('delivers the notifications to a receiver that verifies each with verifyWebhook', async () => {
    const { outbox, keys, clock, advance } = memory();
    // The receiver listens on 127.0.0.1: the operator's development switch lets the endpoint and the sends reach it.
    const local = { allowPrivateNetworks: true };
    const { secret } = await outbox.endpoints.create(
      {
        accountId: 'acct_1',
        url: receiver.url('/notifications'),
        eventTypes: ['key.expiring', 'key.rotation_due', 'credits.low', 'ratelimit.exceeded'],
      },
      local,
    );
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live', expiresAt: iso(T0 + 40 * DAY) });
    await keys.create({ accountId: 'acct_1', name: 'old', mode: 'live' });
    const forward = outboxEvents(outbox, { clock });
    await forward.onEvent({
      type: 'credits.low',
      keyId: key.id,
      accountId: 'acct_1',
      hint: key.hint,
      at: iso(clock()),
      balance: 4,
      threshold: 5,
    });
    advance(34 * DAY);
    const sweep = keyNotifications({ manager: keys, outbox, accounts: () => ['acct_1'], clock });
    await sweep.runOnce();
    await sweep.runOnce();
    const dispatcher = createWebhookDispatcher({ outbox, clock, ...local });
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 4, failed: 0 });
    const got = receiver.received.filter((r) => r.path === '/notifications');
    const verified = await Promise.all(
      got.map((r) => verifyWebhook({ secret, headers: r.headers as never, body: r.body, nowMs: clock() })),
    );
    expect(verified.map((e) => e.type).sort()).toEqual([
      'credits.low',
      'key.expiring',
      'key.rotation_due',
      'key.rotation_due',
    ]);
    expect(verified.find((e) => e.type === 'key.expiring')?.data).toMatchObject({ keyId: key.id, daysLeft: 7 });
    await expect(
      verifyWebhook({ secret, headers: got[0]?.headers as never, body: `${got[0]?.body} `, nowMs: clock() }),
    ).rejects.toMatchObject({ code: 'invalid_signature' });
  });
});
