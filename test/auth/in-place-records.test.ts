// A custom store that changes a record object in place (instead of returning a
// new object) must get a verdict on what the record says now, not on what it said the first time.
import { type ApiKeyRecord, authenticate, CachedKeyStore, generateKey, hashKey, type KeyStore, keyHint } from 'keygate';
import { describe, expect, it } from 'vitest';

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

/** A store that keeps one plain, mutable record and hands out that same object on every lookup. */
async function inPlaceStore() {
  const secret = generateKey({ mode: 'live' });
  const now = Date.parse('2026-11-22T12:00:00Z');
  const record: Mutable<ApiKeyRecord> = {
    id: 'key_custom',
    hash: await hashKey(secret),
    accountId: 'acct_1',
    name: 'custom',
    mode: 'live',
    status: 'active',
    permissions: ['email:verify'],
    allowedIps: ['203.0.113.0/24'],
    hint: keyHint(secret),
    createdAt: new Date(now).toISOString(),
    updatedAt: new Date(now).toISOString(),
    expiresAt: null,
    revokedAt: null,
    rotatedFrom: null,
    rotatedTo: null,
    metadata: {},
    version: 1,
  };
  const store: KeyStore = { findByHash: async (hash) => (hash === record.hash ? (record as ApiKeyRecord) : null) };
  const check = (on: KeyStore = store) =>
    authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.7' }, on, {
      permissions: ['email:verify'],
      clock: () => now,
    });
  return { record, store, check, now, secret };
}

describe('a record changed in place by a custom store', () => {
  it.each([
    [
      'status set to revoked',
      (r: Mutable<ApiKeyRecord>) => {
        r.status = 'revoked';
      },
      401,
      'revoked_api_key',
    ],
    [
      'allowedIps replaced by a list without the client',
      (r: Mutable<ApiKeyRecord>) => {
        r.allowedIps = ['198.51.100.0/24'];
      },
      403,
      'ip_not_allowed',
    ],
    [
      'allowedIps array edited in place',
      (r: Mutable<ApiKeyRecord>) => {
        r.allowedIps[0] = '198.51.100.0/24';
      },
      403,
      'ip_not_allowed',
    ],
    [
      'permissions replaced',
      (r: Mutable<ApiKeyRecord>) => {
        r.permissions = ['email:score'];
      },
      403,
      'insufficient_permissions',
    ],
    [
      'permissions array emptied in place',
      (r: Mutable<ApiKeyRecord>) => {
        r.permissions.length = 0;
      },
      403,
      'insufficient_permissions',
    ],
    [
      'expiresAt set to a past time',
      (r: Mutable<ApiKeyRecord>) => {
        r.expiresAt = '2026-11-01T00:00:00.000Z';
      },
      401,
      'expired_api_key',
    ],
  ])('%s is judged on the record as it is now', async (_, change, status, code) => {
    const { record, check } = await inPlaceStore();
    expect((await check()).status).toBe(200);
    change(record);
    expect(await check()).toMatchObject({ ok: false, status, code });
  });

  it('a change back is seen too, and the public view shows the current name', async () => {
    const { record, check } = await inPlaceStore();
    expect((await check()).status).toBe(200);
    record.allowedIps = ['198.51.100.0/24'];
    expect((await check()).status).toBe(403);
    record.allowedIps = ['203.0.113.0/24'];
    record.name = 'renamed';
    expect(await check()).toMatchObject({ ok: true, key: { name: 'renamed' } });
  });

  it('behind a CachedKeyStore, the in-place revocation still refuses the key', async () => {
    const { record, store, check } = await inPlaceStore();
    const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
    expect((await check(cached)).status).toBe(200);
    record.status = 'revoked';
    expect(await check(cached)).toMatchObject({ status: 401, code: 'revoked_api_key' });
  });

  it('a frozen record (as every built-in store returns) is judged once: the same result object every time', async () => {
    const { record, now, secret } = await inPlaceStore();
    const frozen = Object.freeze({
      ...record,
      permissions: Object.freeze([...record.permissions]),
      allowedIps: Object.freeze([...record.allowedIps]),
      metadata: Object.freeze({}),
    }) as ApiKeyRecord;
    const store: KeyStore = { findByHash: async () => frozen };
    const check = () =>
      authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.7' }, store, { clock: () => now });
    const first = await check();
    expect(first.status).toBe(200);
    expect(await check()).toBe(first);
  });
});
