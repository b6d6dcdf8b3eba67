import {
  type ApiKeyRecord,
  authenticate,
  CachedKeyStore,
  hashKey,
  isUsageStore,
  type KeyChange,
  KeyConflictError,
  KeyManager,
  KeyNotFoundError,
  KeyRevokedError,
  UsageRecorder,
  type UsageStore,
  type WritableKeyStore,
} from 'keygate';

/** What the suite asserts with; vitest's and jest's `expect` fit. */
export interface ContractAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toBeInstanceOf(expected: unknown): void;
  toHaveLength(length: number): void;
  readonly not: ContractAssertion;
}

/** The test functions of the host's runner (vitest, jest, ...), so that keygate depends on none. */
export interface ContractTestApi {
  describe(name: string, fn: () => void): void;
  it(name: string, fn: () => Promise<void>, timeout?: number): void;
  expect(actual: unknown): ContractAssertion;
  beforeEach(fn: () => Promise<void> | void): void;
  afterEach(fn: () => Promise<void> | void): void;
}

/** A fresh, empty store for one test, and what the suite may do with it. */
export interface StoreFixture {
  store: WritableKeyStore;
  /**
   * A second store over the same data, as another process would hold it. When given, the suite
   * checks that changes written through it reach a `CachedKeyStore` over `store` (its change channel).
   */
  peer?: WritableKeyStore;
  /** Makes the backing service unreachable (connections cut, new ones refused) until `restoreStore`. */
  breakStore?(): Promise<void>;
  restoreStore?(): Promise<void>;
  /** Releases what the fixture opened. */
  close?(): Promise<void>;
}

/** Options of {@link describeKeyStoreContract}. */
export interface ContractOptions {
  /** The store has a change channel between instances; every fixture then has a `peer`. Default `false`. */
  channel?: boolean;
  /** The fixture can take the service away; every fixture then has `breakStore` and `restoreStore`. Default `false`. */
  outage?: boolean;
  /** How long to wait for a change to arrive through the channel or for a restored store to answer, in milliseconds. Default `10_000`. */
  patience?: number;
  /** The store keeps usage statistics (`addUsage`, `getUsage`, `getActivity`). Default: detected from the store. */
  usage?: boolean;
}

const ACCOUNT = 'acct_contract';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  return undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves with the first change of `id` at `version` or later that `store` announces; rejects after `patience` ms. */
function nextChange(store: WritableKeyStore, id: string, version: number, patience: number): Promise<KeyChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no change of ${id} v${version} arrived within ${patience} ms`));
    }, patience);
    const off = store.subscribe
      ? store.subscribe((change) => {
          if (change.id !== id || change.version < version) return;
          clearTimeout(timer);
          off();
          resolve(change);
        })
      : () => {};
  });
}

/**
 * The behaviour every writable key store must have, as a test suite a host runs against its own
 * store: create, lookups, update, rotation, permanent revocation, listing, concurrent writers,
 * change notifications reaching a `CachedKeyStore`, and, as `options` declares, changes through a
 * second instance (the channel) and 503 while the store is away (fail closed).
 *
 * @example
 * import { describe, it, expect, beforeEach, afterEach } from 'vitest';
 * import { describeKeyStoreContract } from 'keygate/testing';
 * describeKeyStoreContract('MyStore', async () => ({ store: new MyStore(await freshDb()) }), { describe, it, expect, beforeEach, afterEach });
 */
export function describeKeyStoreContract(
  name: string,
  factory: () => Promise<StoreFixture>,
  t: ContractTestApi,
  options: ContractOptions = {},
): void {
  const { describe, it, expect, beforeEach, afterEach } = t;
  const patience = options.patience ?? 10_000;
  let fx: StoreFixture;
  let keys: KeyManager;
  const caches: CachedKeyStore[] = [];

  const auth = (store: WritableKeyStore, secret: string, ip = '203.0.113.7', timeout = 2000) =>
    authenticate({ headers: { 'x-api-key': secret }, ip }, store, { timeout });
  const cache = (store: WritableKeyStore) => {
    const cached = new CachedKeyStore(store, { ttl: 60_000 });
    caches.push(cached);
    return cached;
  };
  const create = (extra: { allowedIps?: string[]; accountId?: string } = {}) =>
    keys.create({ accountId: ACCOUNT, name: 'contract', mode: 'test', permissions: ['email:verify'], ...extra });

  describe(`key store contract: ${name}`, () => {
    beforeEach(async () => {
      fx = await factory();
      keys = new KeyManager({ store: fx.store });
    });
    afterEach(async () => {
      for (const cached of caches.splice(0)) cached.close();
      await fx.restoreStore?.();
      await fx.close?.();
    });

    it('stores a new key at version 1 and finds it by digest and by id', async () => {
      const { secret, key } = await create({ allowedIps: ['203.0.113.0/24'] });
      const byHash = (await fx.store.findByHash(await hashKey(secret))) as ApiKeyRecord;
      const { id, accountId, name, mode, permissions, allowedIps, hint, createdAt } = key;
      expect(byHash).toMatchObject({ id, accountId, name, mode, permissions, allowedIps, hint, createdAt, version: 1 });
      expect(await fx.store.findById(key.id)).toEqual(byHash);
      expect((await fx.store.findByHash('0'.repeat(64))) ?? null).toBe(null);
      expect((await fx.store.findById('key_missing')) ?? null).toBe(null);
      expect(await auth(fx.store, secret)).toMatchObject({ ok: true, key: { id: key.id } });
    });

    it('refuses a second key with the same id or digest and keeps the first', async () => {
      const { key } = await create();
      const record = (await fx.store.findById(key.id)) as ApiKeyRecord;
      expect(await rejection(fx.store.insert({ ...record, name: 'dup' }))).toBeInstanceOf(KeyConflictError);
      expect(await rejection(fx.store.insert({ ...record, id: 'key_other' }))).toBeInstanceOf(KeyConflictError);
      expect(await fx.store.findById(key.id)).toEqual(record);
      expect((await fx.store.findById('key_other')) ?? null).toBe(null);
    });

    it('applies an update, bumps the version and persists it', async () => {
      const { key } = await create();
      const updated = await keys.update(key.id, { name: 'renamed', allowedIps: ['2001:db8::/32'], metadata: { a: 1 } });
      expect(updated).toMatchObject({ name: 'renamed', allowedIps: ['2001:db8::/32'], metadata: { a: 1 }, version: 2 });
      expect(await fx.store.findById(key.id)).toMatchObject({ name: 'renamed', version: 2 });
      expect(await rejection(fx.store.update('key_missing', { updatedAt: new Date().toISOString() }))).toBeInstanceOf(
        KeyNotFoundError,
      );
    });

    it('keeps a key’s rate limit through create, update, rotate and removal', async () => {
      const perMinute = { limit: 100, windowMs: 60_000 };
      const { secret, key } = await keys.create({
        accountId: ACCOUNT,
        name: 'limited',
        mode: 'test',
        rateLimit: perMinute,
      });
      expect(await fx.store.findByHash(await hashKey(secret))).toMatchObject({ rateLimit: perMinute });
      await keys.update(key.id, { rateLimit: { limit: 5, windowMs: 1500 } });
      expect(await fx.store.findById(key.id)).toMatchObject({ rateLimit: { limit: 5, windowMs: 1500 }, version: 2 });
      const next = await keys.rotate(key.id);
      expect(await fx.store.findById(next.key.id)).toMatchObject({ rateLimit: { limit: 5, windowMs: 1500 } });
      await keys.update(key.id, { rateLimit: null });
      expect(await fx.store.findById(key.id)).toMatchObject({ rateLimit: null });
      expect((await create()).key.rateLimit).toBe(null);
    });

    it('rotates: both keys work during the overlap and are linked both ways', async () => {
      const old = await create();
      const next = await keys.rotate(old.key.id);
      expect(next.key).toMatchObject({ rotatedFrom: old.key.id, permissions: ['email:verify'], accountId: ACCOUNT });
      expect(await keys.get(old.key.id)).toMatchObject({ rotatedTo: next.key.id, status: 'active' });
      expect(await auth(fx.store, old.secret)).toMatchObject({ ok: true });
      expect(await auth(fx.store, next.secret)).toMatchObject({ ok: true });
      await keys.revoke(old.key.id);
      expect(await auth(fx.store, old.secret)).toMatchObject({ code: 'revoked_api_key' });
      expect(await auth(fx.store, next.secret)).toMatchObject({ ok: true });
    });

    it('revokes permanently: the key never authenticates again and no write changes it', async () => {
      const { secret, key } = await create();
      await keys.revoke(key.id);
      const revoked = (await fx.store.findById(key.id)) as ApiKeyRecord;
      expect(revoked).toMatchObject({ status: 'revoked', version: 2 });
      expect(await auth(fx.store, secret)).toMatchObject({ ok: false, status: 401, code: 'revoked_api_key' });
      const now = new Date().toISOString();
      expect(await rejection(keys.update(key.id, { name: 'back' }))).toBeInstanceOf(KeyRevokedError);
      expect(await rejection(fx.store.update(key.id, { name: 'back', updatedAt: now }))).toBeInstanceOf(
        KeyRevokedError,
      );
      expect(await rejection(keys.revoke(key.id))).toBeInstanceOf(KeyRevokedError);
      expect(await fx.store.findById(key.id)).toEqual(revoked);
    });

    it('lists the keys of one account, and none of another', async () => {
      const a = [await create(), await create(), await create()];
      const b = await create({ accountId: 'acct_other' });
      const listed = await fx.store.listByAccount(ACCOUNT);
      expect(listed.map((r) => r.id).sort()).toEqual(a.map((k) => k.key.id).sort());
      expect((await fx.store.listByAccount('acct_other')).map((r) => r.id)).toEqual([b.key.id]);
      expect(await fx.store.listByAccount('acct_nobody')).toEqual([]);
    });

    it('loses no update among 20 concurrent writers', async () => {
      const { key } = await create();
      const writes = Array.from({ length: 20 }, (_, i) =>
        fx.store.update(key.id, { metadata: { writer: i }, updatedAt: new Date().toISOString() }),
      );
      const versions = (await Promise.all(writes)).map((r) => r.version).sort((x, y) => x - y);
      expect(versions).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
      expect(await fx.store.findById(key.id)).toMatchObject({ version: 21 });
    });

    it('leaves a key revoked when a revoke races 20 updates', async () => {
      const { secret, key } = await create();
      const now = () => new Date().toISOString();
      const writes = Array.from({ length: 20 }, (_, i) =>
        i === 10
          ? fx.store.update(key.id, { status: 'revoked', revokedAt: now(), updatedAt: now() })
          : fx.store.update(key.id, { allowedIps: [], name: `w${i}`, updatedAt: now() }),
      );
      const outcomes = await Promise.allSettled(writes);
      const failed = outcomes.filter((o) => o.status === 'rejected');
      for (const f of failed) expect((f as PromiseRejectedResult).reason).toBeInstanceOf(KeyRevokedError);
      const final = (await fx.store.findById(key.id)) as ApiKeyRecord;
      expect(final).toMatchObject({ status: 'revoked', version: 1 + outcomes.length - failed.length });
      expect(await auth(fx.store, secret)).toMatchObject({ code: 'revoked_api_key' });
    });

    it('tells a CachedKeyStore of changes made in the same process: the next request sees them', async () => {
      const a = await create();
      const b = await create();
      const cached = cache(fx.store);
      expect(await auth(cached, a.secret)).toMatchObject({ ok: true });
      expect(await auth(cached, b.secret)).toMatchObject({ ok: true });
      await keys.revoke(a.key.id);
      await keys.update(b.key.id, { allowedIps: ['198.51.100.0/24'] });
      expect(await auth(cached, a.secret)).toMatchObject({ code: 'revoked_api_key' });
      expect(await auth(cached, b.secret)).toMatchObject({ status: 403, code: 'ip_not_allowed' });
    });

    if (options.channel) {
      it('tells a CachedKeyStore of changes made through another instance (the change channel)', async () => {
        if (!fx.peer) throw new Error('options.channel is set, so the fixture must have a peer');
        const peerKeys = new KeyManager({ store: fx.peer });
        const a = await create();
        const b = await create();
        const cached = cache(fx.store);
        // A subscription is live before the first change is written.
        const revoked = nextChange(fx.store, a.key.id, 2, patience);
        const narrowed = nextChange(fx.store, b.key.id, 2, patience);
        expect(await auth(cached, a.secret)).toMatchObject({ ok: true });
        expect(await auth(cached, b.secret)).toMatchObject({ ok: true });
        await sleep(50); // lets a lazily opened channel finish subscribing
        await peerKeys.revoke(a.key.id);
        await peerKeys.update(b.key.id, { allowedIps: ['198.51.100.0/24'] });
        expect(await revoked).toMatchObject({ type: 'revoked', id: a.key.id, version: 2, accountId: ACCOUNT });
        expect(await narrowed).toMatchObject({ type: 'updated', id: b.key.id, version: 2 });
        expect(await auth(cached, a.secret)).toMatchObject({ code: 'revoked_api_key' });
        expect(await auth(cached, b.secret)).toMatchObject({ code: 'ip_not_allowed' });
      });
    }

    it('keeps usage, if it does: concurrent flushes from several recorders add up exactly', async () => {
      if (!(options.usage ?? isUsageStore(fx.store))) return;
      const store = fx.store as WritableKeyStore & UsageStore;
      const peer = (fx.peer ?? fx.store) as WritableKeyStore & UsageStore;
      const { secret, key } = await create({ allowedIps: ['203.0.113.0/24'] });
      const day = new Date().toISOString().slice(0, 10);
      // Five recorders (as five processes would hold them), half on the peer instance, flushing at once.
      const recorders = Array.from(
        { length: 5 },
        (_, i) => new UsageRecorder({ store: i % 2 ? peer : store, interval: 0 }),
      );
      let sent = 0;
      for (let round = 0; round < 4; round++) {
        for (const [i, recorder] of recorders.entries()) {
          for (let n = 0; n <= i; n++) {
            await authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.9' }, store, {
              onResult: recorder.record,
            });
            await authenticate({ headers: { 'x-api-key': secret }, ip: '198.51.100.1' }, store, {
              onResult: recorder.record,
            });
            sent++;
          }
        }
        await Promise.all(recorders.map((r) => r.flush()));
      }
      const counts = await store.getUsage(key.id, day, day);
      const total = (outcome: string) => counts.filter((c) => c.outcome === outcome).reduce((n, c) => n + c.count, 0);
      expect(total('allowed')).toBe(sent);
      expect(total('ip_not_allowed')).toBe(sent);
      expect(counts.every((c) => c.accountId === ACCOUNT && c.day === day)).toBe(true);
      expect(await store.getUsage(key.id, '2000-01-01', '2000-12-31')).toEqual([]);
      const activity = await store.getActivity(key.id);
      expect(activity).toMatchObject({ keyId: key.id, lastUsedIp: '198.51.100.1' });
      // An older activity never replaces a newer one.
      await store.addUsage({
        counts: [],
        activity: [{ keyId: key.id, lastUsedAt: '2001-01-01T00:00:00.000Z', lastUsedIp: '192.0.2.1' }],
      });
      expect((await store.getActivity(key.id))?.lastUsedAt).toBe(activity?.lastUsedAt);
      expect(await store.getActivity('key_never_used')).toBe(null);
    });

    if (options.outage) {
      it('answers 503 while the store is away and recovers when it returns', async () => {
        if (!fx.breakStore || !fx.restoreStore)
          throw new Error('options.outage is set, so the fixture must break and restore');
        const { secret } = await create();
        const cached = cache(fx.store);
        await fx.breakStore();
        // Fail closed: an unreachable store is never an allow, cached or not (the cache was empty).
        expect(await auth(fx.store, secret, undefined, 500)).toMatchObject({
          status: 503,
          code: 'key_store_unavailable',
        });
        expect(await auth(cached, secret, undefined, 500)).toMatchObject({ status: 503 });
        await fx.restoreStore();
        let result = await auth(cached, secret, undefined, 500);
        for (const deadline = Date.now() + patience; !result.ok && Date.now() < deadline; ) {
          await sleep(100);
          result = await auth(cached, secret, undefined, 500);
        }
        expect(result).toMatchObject({ ok: true, status: 200 });
      });
    }
  });
}
