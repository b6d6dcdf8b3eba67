import type { CreatedKey, WritableKeyStore } from 'keygate';
import { authenticate, CachedKeyStore, capabilityOf, KeyManager, UsageRecorder } from 'keygate';
import { ACCOUNT, type ContractCase, type ContractContext, nextChange } from './contract-context.js';
import { poll, sleep } from './contract-kit.js';

async function sameProcessCache({ fx, keys, expect, auth, cache, create }: ContractContext): Promise<void> {
  const a = await create();
  const b = await create();
  const cached = cache(fx.store);
  expect(await auth(cached, a.secret)).toMatchObject({ ok: true });
  expect(await auth(cached, b.secret)).toMatchObject({ ok: true });
  await keys.revoke(a.key.id);
  await keys.update(b.key.id, { allowedIps: ['198.51.100.0/24'] });
  expect(await auth(cached, a.secret)).toMatchObject({ code: 'revoked_api_key' });
  expect(await auth(cached, b.secret)).toMatchObject({ status: 403, code: 'ip_not_allowed' });
}

async function otherInstanceCache(c: ContractContext): Promise<void> {
  const { fx, expect, auth, cache, create, patienceMs } = c;
  if (!fx.peer) throw new Error('options.channel is set, so the fixture must have a peer');
  const peerKeys = new KeyManager({ store: fx.peer });
  const a = await create();
  const b = await create();
  const cached = cache(fx.store);
  // A subscription is live before the first change is written.
  const revoked = nextChange(fx.store, a.key.id, 2, patienceMs);
  const narrowed = nextChange(fx.store, b.key.id, 2, patienceMs);
  await sleep(50); // lets a lazily opened channel finish subscribing (and announce its resync)
  expect(await auth(cached, a.secret)).toMatchObject({ ok: true });
  expect(await auth(cached, b.secret)).toMatchObject({ ok: true });
  await peerKeys.revoke(a.key.id);
  await peerKeys.update(b.key.id, { allowedIps: ['198.51.100.0/24'] });
  expect(await revoked).toMatchObject({ type: 'revoked', id: a.key.id, version: 2, accountId: ACCOUNT });
  expect(await narrowed).toMatchObject({ type: 'updated', id: b.key.id, version: 2 });
  expect(await auth(cached, a.secret)).toMatchObject({ code: 'revoked_api_key' });
  expect(await auth(cached, b.secret)).toMatchObject({ code: 'ip_not_allowed' });
}

/** Five recorders (as five processes would hold them), alternating between `store` and `peer`, flushing at once. */
async function recordTraffic(store: WritableKeyStore, peer: WritableKeyStore, secret: string): Promise<number> {
  const recorders = Array.from(
    { length: 5 },
    (_, i) => new UsageRecorder({ store: i % 2 ? peer : store, intervalMs: 0 }),
  );
  const send = (recorder: UsageRecorder, ip: string) =>
    authenticate({ headers: { 'x-api-key': secret }, ip }, store, { onResult: recorder.record });
  let sent = 0;
  for (let round = 0; round < 4; round++) {
    for (const [i, recorder] of recorders.entries()) {
      for (let n = 0; n <= i; n++) {
        await send(recorder, '203.0.113.9');
        await send(recorder, '198.51.100.1');
        sent++;
      }
    }
    await Promise.all(recorders.map((r) => r.flush()));
  }
  return sent;
}

async function keepsUsage({ fx, expect, create }: ContractContext): Promise<void> {
  const usage = capabilityOf(fx.store, 'usage');
  if (!usage) throw new Error('options.usage is set, so the store must declare the usage capability');
  const { secret, key }: CreatedKey = await create({ allowedIps: ['203.0.113.0/24'] });
  const day = new Date().toISOString().slice(0, 10);
  const sent = await recordTraffic(fx.store, fx.peer ?? fx.store, secret);
  const counts = await usage.getUsage(key.id, day, day);
  const total = (outcome: string) => counts.filter((c) => c.outcome === outcome).reduce((n, c) => n + c.count, 0);
  expect(total('allowed')).toBe(sent);
  expect(total('ip_not_allowed')).toBe(sent);
  expect(counts.every((c) => c.accountId === ACCOUNT && c.day === day)).toBe(true);
  expect(await usage.getUsage(key.id, '2000-01-01', '2000-12-31')).toEqual([]);
  const activity = await usage.getActivity(key.id);
  // The last ALLOWED use: every round ended with a refusal from 198.51.100.1, which does not count.
  expect(activity).toMatchObject({ keyId: key.id, lastUsedIp: '203.0.113.9' });
  // An older activity never replaces a newer one.
  const older = { keyId: key.id, lastUsedAt: '2001-01-01T00:00:00.000Z', lastUsedIp: '192.0.2.1' };
  await usage.addUsage({ counts: [], activity: [older] });
  expect((await usage.getActivity(key.id))?.lastUsedAt).toBe(activity?.lastUsedAt);
  expect(await usage.getActivity('key_never_used')).toBe(null);
}

async function failsClosed({ fx, expect, auth, cache, create, patienceMs }: ContractContext): Promise<void> {
  if (!fx.breakStore || !fx.restoreStore)
    throw new Error('options.outage is set, so the fixture must break and restore');
  const { secret } = await create();
  const cached = cache(fx.store);
  await fx.breakStore();
  // Fail closed: an unreachable store is never an allow, cached or not (the cache was empty).
  expect(await auth(fx.store, secret, undefined, 500)).toMatchObject({ status: 503, code: 'key_store_unavailable' });
  expect(await auth(cached, secret, undefined, 500)).toMatchObject({ status: 503 });
  await fx.restoreStore();
  const attempt = () => auth(cached, secret, undefined, 500);
  const result = await poll(attempt, (r) => r.ok, Date.now() + patienceMs, 100);
  expect(result).toMatchObject({ ok: true, status: 200 });
}

async function outboxThroughCache({ fx, expect }: ContractContext): Promise<void> {
  const inner = capabilityOf(fx.store, 'outbox');
  if (!inner) throw new Error('options.outbox is set, so the store must declare the outbox capability');
  const cached = new CachedKeyStore(fx.store, { ttlMs: 60_000 });
  try {
    const outbox = capabilityOf(cached, 'outbox');
    expect(outbox).toBe(inner);
    // An account of its own: a fixture may share its outbox between tests.
    const accountId = `acct_outbox_${Math.random().toString(36).slice(2, 10)}`;
    await inner.endpoints.create({ accountId, url: 'https://hooks.example.com/contract' });
    await new KeyManager({ store: cached }).create({ accountId, name: 'ci', mode: 'live' });
    expect((await inner.deliveries({ accountId })).map((d) => d.eventType)).toEqual(['key.created']);
  } finally {
    cached.close();
  }
}

/** The cases about changes reaching caches, usage and outages that apply to this store, as `options` declares them. */
export function changeCases(options: {
  channel?: boolean;
  outage?: boolean;
  usage?: boolean;
  outbox?: boolean;
}): ContractCase[] {
  const cases: ContractCase[] = [
    ['tells a CachedKeyStore of changes made in the same process: the next request sees them', sameProcessCache],
  ];
  if (options.channel) {
    cases.push([
      'tells a CachedKeyStore of changes made through another instance (the change channel)',
      otherInstanceCache,
    ]);
  }
  cases.push([
    'keeps usage, if it does: concurrent flushes from several recorders add up exactly',
    async (c) => {
      if (options.usage ?? capabilityOf(c.fx.store, 'usage') !== undefined) await keepsUsage(c);
    },
  ]);
  cases.push([
    'keeps its outbox, if it has one, reachable through a CachedKeyStore, which passes the events on with the write',
    async (c) => {
      if (options.outbox ?? capabilityOf(c.fx.store, 'outbox') !== undefined) await outboxThroughCache(c);
    },
  ]);
  if (options.outage) cases.push(['answers 503 while the store is away and recovers when it returns', failsClosed]);
  return cases;
}
