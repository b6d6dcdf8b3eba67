// What a cached key keeps, checked by structure (not by heap size): the cache and the compiled form
// share what keys have in common instead of holding a copy per key.
import { authenticate, CachedKeyStore, KeyManager, MemoryKeyStore } from 'keygate';
import { describe, expect, it } from 'vitest';
import { compileKey, toPublicKey } from '../../src/auth/compiled-key.js';
import { compileAllowList } from '../../src/ip/allow-list.js';
import { freezeRecord } from '../../src/store/apply-patch.js';
import type { ApiKeyRecord } from '../../src/types.js';

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
  return { ra: ra as ApiKeyRecord, rb: rb as ApiKeyRecord, stored: records };
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

  it("their compiled forms share one compiled allow list, and the view shares the record's lists", async () => {
    const { ra, rb } = await twoKeysOfOneAccount();
    const [ka, kb] = [compileKey(ra), compileKey(rb)];
    expect(ka.allowList).toBe(kb.allowList);
    expect(ka.view.permissions).toBe(ra.permissions);
    expect(ka.view.allowedIps).toBe(ra.allowedIps);
    expect(ka.view.metadata).toBe(ra.metadata);
    expect(ka.view.rateLimit).toBe(ra.rateLimit);
    expect(ka.permissions).toBe(ra.permissions);
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
