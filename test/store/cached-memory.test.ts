// What a cached key keeps, checked by structure, and by heap bytes (a count, not a timing): the cache
// keeps one object per key, its public view, sharing what keys have in common instead of a copy per key.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  authenticate,
  CachedKeyStore,
  generateKey,
  hashKey,
  KeyManager,
  type KeyStore,
  keyHint,
  MemoryKeyStore,
} from 'keygate';
import { CAPABILITIES, type Capable } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';
import { compileAllowList } from '../../src/ip/allow-list.js';
import { allowListOf, compileKey, toPublicKey } from '../../src/key/compiled-key.js';
import { freezeRecord } from '../../src/store/apply-patch.js';
import type { ApiKeyRecord, PublicKey } from '../../src/types.js';

const viewOf = (cached: CachedKeyStore, hash: string): PublicKey | undefined =>
  (cached as unknown as Capable)[CAPABILITIES].views?.peekView(hash);

async function twoKeysOfOneAccount() {
  const memory = new MemoryKeyStore();
  const cached = new CachedKeyStore(memory);
  const keys = new KeyManager({ store: memory });
  const same = {
    accountId: 'acct_1',
    mode: 'live' as const,
    permissions: ['email:verify', 'email:send'],
    allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
    metadata: { plan: 'pro' },
    rateLimit: { limit: 100, windowMs: 60_000 },
  };
  const a = await keys.create({ ...same, name: 'a' });
  const b = await keys.create({ ...same, name: 'b' });
  const request = (secret: string) => ({ headers: { 'x-api-key': secret }, ip: '203.0.113.9' });
  for (const secret of [a.secret, b.secret]) {
    expect((await authenticate(request(secret), cached, { permissions: ['email:verify'] })).ok).toBe(true);
  }
  const records = await Promise.all([a, b].map(async (k) => (await memory.findById(k.key.id)) as ApiKeyRecord));
  const [ra, rb] = records.map((r) => cached.peek(r.hash) as ApiKeyRecord);
  return { ra: ra as ApiKeyRecord, rb: rb as ApiKeyRecord, stored: records, cached, secrets: [a.secret, b.secret] };
}

describe('a cached key keeps no copy of what other keys share', () => {
  it('two keys of one account share their account, lists, metadata and rate limit in the cache', async () => {
    const { ra, rb, stored } = await twoKeysOfOneAccount();
    expect(ra.permissions).toBe(rb.permissions);
    expect(ra.allowedIps).toBe(rb.allowedIps);
    expect(ra.metadata).toBe(rb.metadata);
    expect(ra.rateLimit).toBe(rb.rateLimit);
    // Equal to what the store holds, frozen all the way down.
    expect(ra).toEqual(stored[0]);
    expect(Object.isFrozen(ra) && Object.isFrozen(ra.permissions) && Object.isFrozen(ra.metadata)).toBe(true);
  });

  it('the cache holds one object per key, its public view: what authenticate hands out as the key', async () => {
    const { ra, rb, cached, secrets } = await twoKeysOfOneAccount();
    const view = viewOf(cached, ra.hash) as PublicKey;
    expect(viewOf(cached, ra.hash)).toBe(view);
    expect('hash' in view).toBe(false);
    expect({ ...view, hash: ra.hash }).toEqual(ra);
    const result = await authenticate({ headers: { 'x-api-key': secrets[0] as string }, ip: '203.0.113.9' }, cached);
    expect(result.ok && result.key).toBe(view);
    // peek rebuilds the record from the view: its lists are the view's, shared with the other key's.
    expect(ra.permissions).toBe(view.permissions);
    expect(allowListOf(ra.allowedIps)).toBe(allowListOf(rb.allowedIps));
  });

  it("a compiled record's view shares the record's lists", async () => {
    const { ra } = await twoKeysOfOneAccount();
    const ka = compileKey(ra);
    expect(ka.view.permissions).toBe(ra.permissions);
    expect(ka.view.allowedIps).toBe(ra.allowedIps);
    expect(ka.view.metadata).toBe(ra.metadata);
    expect(ka.view.rateLimit).toBe(ra.rateLimit);
  });

  it('a rate limit of any shape (a list of named policies too) is kept as it is, shared by equal ones', async () => {
    const policies = Object.freeze([Object.freeze({ name: 'burst', limit: 10, windowMs: 1_000 })]);
    const records = await Promise.all(
      [0, 1].map(async (i) => {
        const secret = generateKey();
        return freezeRecord({ ...recordFor(i, await hashKey(secret), keyHint(secret)), rateLimit: policies } as never);
      }),
    );
    const cached = new CachedKeyStore({ findByHash: async (h) => records.find((r) => r.hash === h) ?? null });
    const [a, b] = await Promise.all(records.map((r) => cached.findByHash(r.hash)));
    expect(a?.rateLimit).toEqual(policies);
    expect(a?.rateLimit).toBe(b?.rateLimit);
  });

  it('an empty allow list is one shared object, and a compiled list holds one table per family', () => {
    expect(compileAllowList([])).toBe(compileAllowList([]));
    const list = compileAllowList(['203.0.113.0/24', '198.51.100.7', '2001:db8::/32']);
    const tables = Object.values(list).filter((v) => ArrayBuffer.isView(v));
    expect(tables).toHaveLength(2);
  });

  it('a frozen record is viewed without copying its lists; a mutable one is copied and frozen', () => {
    const base = {
      id: 'key_1',
      hash: 'a'.repeat(64),
      accountId: 'acct_1',
      name: 'k',
      mode: 'live',
      status: 'active',
      permissions: ['email:verify'],
      allowedIps: [],
      hint: 'mk_live_…abcd',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      expiresAt: null,
      revokedAt: null,
      rotatedFrom: null,
      rotatedTo: null,
      metadata: {},
      version: 1,
    } as ApiKeyRecord;
    const sealed = freezeRecord(base);
    const view = toPublicKey(sealed);
    expect(view.permissions).toBe(sealed.permissions);
    expect('hash' in view).toBe(false);
    expect(view).toEqual({ ...base, hash: undefined, rateLimit: null, suspendedAt: null, suspendedReason: null });
    const loose = toPublicKey(base);
    expect(loose.permissions).not.toBe(base.permissions);
    expect(Object.isFrozen(loose.permissions) && Object.isFrozen(loose.metadata)).toBe(true);
  });
});

// A record like the one KeyManager writes with no options, as a backend hands it out.
function recordFor(i: number, hash: string, hint: string) {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 61_000).toISOString();
  return {
    ...{ id: `key_${(i * 7919).toString(36).padStart(22, '0')}`, hash, accountId: `acct_${i % 100}` },
    ...{ name: `working ${i}`, mode: 'live', status: 'active', permissions: ['email:verify'], allowedIps: [] },
    ...{ hint, createdAt: at, updatedAt: at, expiresAt: null, revokedAt: null, rotatedFrom: null, rotatedTo: null },
    ...{ metadata: {}, version: 1 },
  };
}

describe('heap per cached key', () => {
  it('a key KeyManager creates with no options takes under 512 bytes of heap in the cache, once authenticated', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    // 25,000 keys fill the cache's Map to the same share of its capacity as the benchmark's 100,000.
    const n = 25_000;
    const secrets = Array.from({ length: n }, () => generateKey({ mode: 'live' }));
    const rows = new Map<string, string>();
    for (let i = 0; i < n; i++) {
      const hash = await hashKey(secrets[i] as string);
      // A flat string, as a backend reads one.
      rows.set(hash, Buffer.from(JSON.stringify(recordFor(i, hash, keyHint(secrets[i] as string)))).toString());
    }
    const backend: KeyStore = { findByHash: async (h) => freezeRecord(JSON.parse(rows.get(h) as string)) };
    const before = heap();
    // Made after the first reading: what it allocates for `max` keys up front counts too.
    const cached = new CachedKeyStore(backend, { max: n, ttlMs: 3_600_000 });
    for (const secret of secrets) {
      const result = await authenticate({ headers: { 'x-api-key': secret } }, cached, {
        permissions: ['email:verify'],
      });
      expect(result.ok).toBe(true);
    }
    const perKey = (heap() - before) / n;
    expect(cached.size.found).toBe(n);
    expect(perKey).toBeLessThan(512);
  });
});
