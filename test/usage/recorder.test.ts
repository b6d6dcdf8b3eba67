import { type AuthRequest, authenticate, type KeygateEvent, KeyManager, MemoryKeyStore, UsageRecorder } from 'keygate';
import { CAPABILITIES, type UsageBatch } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';

const T0 = Date.parse('2026-11-22T23:59:00Z');
const DAY = 86_400_000;

async function setup(extra: Partial<ConstructorParameters<typeof UsageRecorder>[0]> = {}) {
  let now = T0;
  const clock = () => now;
  const store = new MemoryKeyStore();
  const events: KeygateEvent[] = [];
  const keys = new KeyManager({ store, clock });
  const usage = new UsageRecorder({ store, intervalMs: 0, clock, onEvent: (e) => void events.push(e), ...extra });
  const managed = new KeyManager({ store, clock, usage });
  const { secret, key } = await keys.create({
    accountId: 'acct_1',
    name: 'k',
    mode: 'live',
    permissions: ['email:verify'],
    allowedIps: ['203.0.113.0/24'],
  });
  const send = (ip: string, permissions: string[] = ['email:verify']) =>
    authenticate({ headers: { 'x-api-key': secret }, ip }, store, { permissions, onResult: usage.record, clock });
  return { store, keys: managed, usage, key, secret, events, send, advance: (ms: number) => (now += ms) };
}

describe('UsageRecorder', () => {
  it('counts requests per UTC day and outcome, with last use and address', async () => {
    const s = await setup();
    await s.send('203.0.113.1');
    await s.send('203.0.113.2');
    await s.send('198.51.100.1'); // outside the allow list
    await s.send('203.0.113.3', ['contacts:find']); // missing permission
    s.advance(2 * 60_000); // past midnight UTC
    await s.send('203.0.113.4');
    const report = await s.keys.usage(s.key.id, { from: '2026-11-22', to: '2026-11-23' });
    expect(report).toMatchObject({
      allowed: 3,
      denied: 2,
      deniedBy: { ip_not_allowed: 1, insufficient_permissions: 1 },
      lastUsedIp: '203.0.113.4',
      lastUsedAt: '2026-11-23T00:01:00.000Z',
    });
    expect(report.days).toEqual([
      { day: '2026-11-22', allowed: 2, denied: 2, deniedBy: { ip_not_allowed: 1, insufficient_permissions: 1 } },
      { day: '2026-11-23', allowed: 1, denied: 0, deniedBy: {} },
    ]);
  });

  it("reports the last allowed use as last used: a later refusal, even a revoked key's 401, is counted but does not move it", async () => {
    const s = await setup();
    await s.send('203.0.113.1');
    s.advance(60_000);
    await s.send('198.51.100.1'); // outside the allow list: 403
    await s.keys.revoke(s.key.id);
    s.advance(60_000);
    await s.send('203.0.113.2'); // revoked: 401
    const report = await s.keys.usage(s.key.id, { from: '2026-11-22', to: '2026-11-23' });
    expect(report).toMatchObject({
      allowed: 1,
      denied: 2,
      deniedBy: { ip_not_allowed: 1, revoked_api_key: 1 },
      lastUsedAt: new Date(T0).toISOString(),
      lastUsedIp: '203.0.113.1',
    });
  });

  it('reports no last use for a key that was only ever refused, and sends no activity for it', async () => {
    const s = await setup();
    await s.send('198.51.100.1');
    await s.send('203.0.113.1', ['contacts:find']);
    expect(s.usage.pending().activity).toEqual([]);
    const report = await s.keys.usage(s.key.id, { from: '2026-11-22', to: '2026-11-22' });
    expect(report).toMatchObject({ allowed: 0, denied: 2, lastUsedAt: null, lastUsedIp: null });
  });

  it('loses nothing when the store fails a flush: the counts go with the next one', async () => {
    const s = await setup();
    let fail = true;
    const flaky = {
      addUsage: (b: UsageBatch) => (fail ? Promise.reject(new Error('down')) : s.store.addUsage(b)),
      getUsage: s.store.getUsage.bind(s.store),
      getActivity: s.store.getActivity.bind(s.store),
    };
    const usage = new UsageRecorder({ store: { [CAPABILITIES]: { usage: flaky } }, intervalMs: 0, clock: () => T0 });
    const req: AuthRequest = { headers: { 'x-api-key': s.secret }, ip: '203.0.113.9' };
    for (let i = 0; i < 7; i++) await authenticate(req, s.store, { onResult: usage.record });
    await expect(usage.flush()).rejects.toThrow('down');
    for (let i = 0; i < 3; i++) await authenticate(req, s.store, { onResult: usage.record });
    fail = false;
    await usage.flush();
    await usage.flush(); // nothing left: must not add twice
    expect((await s.keys.usage(s.key.id, { from: '2026-11-22', to: '2026-11-22' })).allowed).toBe(10);
  });

  it('close() flushes what is left', async () => {
    const s = await setup();
    await s.send('203.0.113.1');
    await s.usage.close();
    expect((await s.store.getUsage(s.key.id, '2026-11-22', '2026-11-22'))[0]?.count).toBe(1);
  });

  it('reports denials as auth.denied events without secrets, also for unknown keys', async () => {
    const s = await setup();
    await s.send('198.51.100.1');
    await authenticate({ headers: { 'x-api-key': 'garbage' }, ip: '192.0.2.1' }, s.store, { onResult: s.usage.record });
    expect(s.events).toEqual([
      expect.objectContaining({
        type: 'auth.denied',
        keyId: s.key.id,
        accountId: 'acct_1',
        hint: s.key.hint,
        code: 'ip_not_allowed',
        ip: '198.51.100.1',
      }),
      expect.objectContaining({ type: 'auth.denied', keyId: null, code: 'malformed_api_key', ip: '192.0.2.1' }),
    ]);
    expect(JSON.stringify(s.events)).not.toContain(s.secret);
  });

  it('an event hook that throws or rejects never changes an outcome', async () => {
    for (const onEvent of [
      () => {
        throw new Error('sync bug');
      },
      () => Promise.reject(new Error('async bug')),
    ]) {
      const s = await setup({ onEvent });
      expect(await s.send('198.51.100.1')).toMatchObject({ status: 403 });
      expect((await s.send('203.0.113.1')).ok).toBe(true);
    }
  });

  it('flags a spike: a minute far above the key’s own baseline, after its warm-up', async () => {
    const s = await setup({ spike: { factor: 5, minRequests: 50, warmupMinutes: 10 } });
    // 12 quiet minutes at 10 requests each build the baseline.
    for (let m = 0; m < 12; m++) {
      for (let i = 0; i < 10; i++) await s.send('203.0.113.1');
      s.advance(60_000);
    }
    expect(s.events.filter((e) => e.type === 'usage.spike')).toEqual([]);
    for (let i = 0; i < 100; i++) await s.send('203.0.113.1');
    s.advance(60_000);
    await s.send('203.0.113.1'); // the next minute closes the busy one
    const spikes = s.events.filter((e) => e.type === 'usage.spike');
    expect(spikes).toHaveLength(1);
    expect(spikes[0]).toMatchObject({ keyId: s.key.id, lastMinute: 100 });
    expect(spikes[0]?.baselinePerMinute).toBeCloseTo(10, 0);
  });

  it('treats a spike option given as undefined as absent: detection stays on with its default', async () => {
    // `{ ...defaults, ...options }` would take factor: undefined and never flag anything.
    const s = await setup({ spike: { factor: undefined, minRequests: 50, warmupMinutes: 10 } });
    for (let m = 0; m < 12; m++) {
      for (let i = 0; i < 10; i++) await s.send('203.0.113.1');
      s.advance(60_000);
    }
    for (let i = 0; i < 100; i++) await s.send('203.0.113.1');
    s.advance(60_000);
    await s.send('203.0.113.1');
    const spikes = s.events.filter((e) => e.type === 'usage.spike');
    expect(spikes).toHaveLength(1);
    expect(spikes[0]).toMatchObject({ keyId: s.key.id, lastMinute: 100 });
  });

  it('refuses a spike option that is not a number in range, naming it, without echoing the value', async () => {
    const store = new MemoryKeyStore();
    const refused: Array<[unknown, string]> = [
      [{ factor: 0 }, 'spike.factor'],
      [{ factor: Number.NaN }, 'spike.factor'],
      [{ factor: Number.POSITIVE_INFINITY }, 'spike.factor'],
      [{ factor: '5' }, 'spike.factor'],
      [{ factor: null }, 'spike.factor'],
      [{ minRequests: -1 }, 'spike.minRequests'],
      [{ minRequests: 1.5 }, 'spike.minRequests'],
      [{ warmupMinutes: 'mk_live_0123456789abcdefghijklmnopqrstuvwxyzABCD' }, 'spike.warmupMinutes'],
      ['often', 'spike'],
      [[5], 'spike'],
    ];
    for (const [spike, field] of refused) {
      let thrown: unknown;
      try {
        new UsageRecorder({ store, intervalMs: 0, spike: spike as never });
      } catch (err) {
        thrown = err;
      }
      expect({ spike, error: thrown }).toMatchObject({ spike, error: { code: 'invalid_input', field } });
      expect((thrown as Error).message).not.toContain('0123456789abcdef');
    }
    // Values in range are taken, zero included where it means "none".
    expect(
      () => new UsageRecorder({ store, intervalMs: 0, spike: { factor: 1.5, minRequests: 0, warmupMinutes: 0 } }),
    ).not.toThrow();
    expect(() => new UsageRecorder({ store, intervalMs: 0, spike: {} })).not.toThrow();
  });

  it('raises no spike alarm in a key’s first minutes of traffic', async () => {
    const s = await setup({ spike: { factor: 5, minRequests: 50, warmupMinutes: 10 } });
    for (let i = 0; i < 500; i++) await s.send('203.0.113.1');
    s.advance(60_000);
    await s.send('203.0.113.1');
    expect(s.events.filter((e) => e.type === 'usage.spike')).toEqual([]);
  });

  it('reports key.rotation_due once a day for a used key older than rotationDays', async () => {
    const s = await setup({ rotationDays: 90 });
    await s.send('203.0.113.1');
    s.advance(91 * 86_400_000);
    await s.send('203.0.113.1');
    await s.send('203.0.113.1');
    const due = s.events.filter((e) => e.type === 'key.rotation_due');
    expect(due).toEqual([expect.objectContaining({ keyId: s.key.id, ageDays: 91 })]);
    expect((await s.keys.get(s.key.id))?.rotationDue).toBe(true);
  });

  it("prunes the store's counts older than retainMs (400 days by default) once a UTC day by its clock, at a flush", async () => {
    const s = await setup();
    // Days counted by the real clock, which the store prunes by; the recorder's clock says when.
    const dayAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString().slice(0, 10);
    const count = (day: string) => ({
      keyId: s.key.id,
      accountId: 'acct_1',
      day,
      outcome: 'allowed' as const,
      count: 1,
    });
    const days = async () => (await s.store.getUsage(s.key.id, '2000-01-01', '2100-01-01')).map((c) => c.day).sort();
    await s.store.addUsage({ counts: [count(dayAgo(402)), count(dayAgo(398))], activity: [] });
    await s.usage.flush();
    expect(await days()).toEqual([dayAgo(398)]);
    // Once a day: a count that ages past the retention later that day waits for the next day's flush.
    await s.store.addUsage({ counts: [count(dayAgo(403))], activity: [] });
    await s.send('203.0.113.1');
    await s.usage.flush();
    expect(await days()).toEqual([dayAgo(403), dayAgo(398), '2026-11-22'].sort());
    s.advance(DAY);
    await s.usage.flush();
    expect(await days()).toEqual([dayAgo(398), '2026-11-22'].sort());
  });

  it('keeps every count with retainMs false, and never fails a flush for a prune that fails', async () => {
    const kept = await setup({ retainMs: false });
    const old = { keyId: kept.key.id, accountId: 'acct_1', day: '2001-01-01', outcome: 'allowed' as const, count: 1 };
    await kept.store.addUsage({ counts: [old], activity: [] });
    await kept.usage.flush();
    expect(await kept.store.getUsage(kept.key.id, '2001-01-01', '2001-01-01')).toHaveLength(1);

    const s = await setup();
    let prunes = 0;
    const failing = {
      addUsage: (b: UsageBatch) => s.store.addUsage(b),
      getUsage: s.store.getUsage.bind(s.store),
      getActivity: s.store.getActivity.bind(s.store),
      prune: async () => {
        prunes++;
        throw new Error('down');
      },
    };
    const usage = new UsageRecorder({ store: { [CAPABILITIES]: { usage: failing } }, intervalMs: 0, clock: () => T0 });
    await authenticate({ headers: { 'x-api-key': s.secret }, ip: '203.0.113.9' }, s.store, { onResult: usage.record });
    await usage.flush();
    await usage.flush(); // tried again
    expect(prunes).toBe(2);
    expect((await s.store.getUsage(s.key.id, '2026-11-22', '2026-11-22'))[0]?.count).toBe(1);
  });

  it('takes retainMs false or a whole number of milliseconds of a day or more, and refuses anything else, naming it', () => {
    for (const retainMs of [false, DAY, 400 * DAY] as const) {
      expect(() => new UsageRecorder({ store: new MemoryKeyStore(), retainMs })).not.toThrow();
    }
    for (const retainMs of [0, 3_600_000, DAY + 0.5, '400d', true]) {
      expect(() => new UsageRecorder({ store: new MemoryKeyStore(), retainMs: retainMs as never })).toThrow(
        expect.objectContaining({ code: 'invalid_input', field: 'retainMs' }),
      );
    }
  });

  it('refuses a store that keeps no usage', () => {
    expect(() => new UsageRecorder({ store: { findByHash: async () => null } })).toThrow(
      expect.objectContaining({ field: 'store' }),
    );
  });
});

describe('KeyManager hygiene signals', () => {
  it('each view tells its age and rotationDue (default 90 days)', async () => {
    let now = T0;
    const store = new MemoryKeyStore();
    const keys = new KeyManager({ store, clock: () => now });
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    expect(key).toMatchObject({ ageDays: 0, rotationDue: false });
    now += 89 * 86_400_000;
    expect(await keys.get(key.id)).toMatchObject({ ageDays: 89, rotationDue: false });
    now += 86_400_000;
    expect(await keys.get(key.id)).toMatchObject({ ageDays: 90, rotationDue: true });
    const custom = new KeyManager({ store, clock: () => now, rotationDays: 30 });
    expect(await custom.get(key.id)).toMatchObject({ rotationDue: true });
  });

  it('list(account, { unusedForMs }) finds active keys with no traffic for that long', async () => {
    const s = await setup();
    const quiet = await s.keys.create({ accountId: 'acct_1', name: 'quiet', mode: 'test' });
    s.advance(40 * 86_400_000);
    await s.send('203.0.113.1'); // the first key is in use
    expect((await s.keys.list('acct_1', { unusedForMs: 30 * DAY })).map((k) => k.id)).toEqual([quiet.key.id]);
    expect(await s.keys.list('acct_1', { unusedForMs: 60 * DAY })).toEqual([]);
  });

  it('emits key.* events for every write, without secrets', async () => {
    const events: KeygateEvent[] = [];
    const keys = new KeyManager({ store: new MemoryKeyStore(), onEvent: (e) => void events.push(e) });
    const { secret, key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    await keys.update(key.id, { name: 'k2' });
    const next = await keys.rotate(key.id);
    await keys.revoke(key.id);
    expect(events.map((e) => [e.type, e.keyId])).toEqual([
      ['key.created', key.id],
      ['key.updated', key.id],
      ['key.rotated', key.id],
      ['key.revoked', key.id],
    ]);
    expect(events[2]?.newKeyId).toBe(next.key.id);
    expect(events.every((e) => e.accountId === 'a' && e.hint === key.hint && typeof e.at === 'string')).toBe(true);
    const text = JSON.stringify(events);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(next.secret);
  });
});
