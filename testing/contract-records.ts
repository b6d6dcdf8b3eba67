import { type ApiKeyRecord, hashKey, KeyConflictError, KeyNotFoundError, KeyRevokedError } from 'keygate';
import { ACCOUNT, type ContractCase, type ContractContext } from './contract-context.js';
import { rejection } from './contract-kit.js';

async function storesAndFinds({ fx, expect, auth, create }: ContractContext): Promise<void> {
  const { secret, key } = await create({ allowedIps: ['203.0.113.0/24'] });
  const byHash = (await fx.store.findByHash(await hashKey(secret))) as ApiKeyRecord;
  const { id, accountId, name, mode, permissions, allowedIps, hint, createdAt } = key;
  expect(byHash).toMatchObject({ id, accountId, name, mode, permissions, allowedIps, hint, createdAt, version: 1 });
  expect(await fx.store.findById(key.id)).toEqual(byHash);
  expect((await fx.store.findByHash('0'.repeat(64))) ?? null).toBe(null);
  expect((await fx.store.findById('key_missing')) ?? null).toBe(null);
  expect(await auth(fx.store, secret)).toMatchObject({ ok: true, key: { id: key.id } });
}

async function refusesDuplicates({ fx, expect, create }: ContractContext): Promise<void> {
  const { key } = await create();
  const record = (await fx.store.findById(key.id)) as ApiKeyRecord;
  // A conflict, never a store failure, naming the key being written.
  const sameId = await rejection(fx.store.insert({ ...record, name: 'dup', hash: 'e'.repeat(64) }));
  expect(sameId).toBeInstanceOf(KeyConflictError);
  expect(sameId).toMatchObject({ code: 'key_conflict', keyId: key.id });
  const sameDigest = await rejection(fx.store.insert({ ...record, id: 'key_other' }));
  expect(sameDigest).toBeInstanceOf(KeyConflictError);
  expect(sameDigest).toMatchObject({ code: 'key_conflict', keyId: 'key_other' });
  expect(await rejection(fx.store.insert({ ...record, name: 'dup' }))).toBeInstanceOf(KeyConflictError);
  expect(await fx.store.findById(key.id)).toEqual(record);
  expect((await fx.store.findById('key_other')) ?? null).toBe(null);
}

async function updates({ fx, keys, expect, create }: ContractContext): Promise<void> {
  const { key } = await create();
  const updated = await keys.update(key.id, { name: 'renamed', allowedIps: ['2001:db8::/32'], metadata: { a: 1 } });
  expect(updated).toMatchObject({ name: 'renamed', allowedIps: ['2001:db8::/32'], metadata: { a: 1 }, version: 2 });
  expect(await fx.store.findById(key.id)).toMatchObject({ name: 'renamed', version: 2 });
  const missing = fx.store.update('key_missing', { updatedAt: new Date().toISOString() });
  expect(await rejection(missing)).toBeInstanceOf(KeyNotFoundError);
}

async function keepsRateLimit({ fx, keys, expect, create }: ContractContext): Promise<void> {
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
  const named = [
    { name: 'burst', limit: 10, windowMs: 1_000 },
    { name: 'monthly', limit: 1_000_000, windowMs: 2_592_000_000 },
  ];
  await keys.update(key.id, { rateLimit: named });
  expect((await fx.store.findById(key.id))?.rateLimit).toEqual(named);
  expect((await fx.store.findByHash(await hashKey(secret)))?.rateLimit).toEqual(named);
  await keys.update(key.id, { rateLimit: null });
  expect(await fx.store.findById(key.id)).toMatchObject({ rateLimit: null });
  expect((await create()).key.rateLimit).toBe(null);
}

async function rotates({ fx, keys, expect, auth, create }: ContractContext): Promise<void> {
  const old = await create();
  const next = await keys.rotate(old.key.id);
  expect(next.key).toMatchObject({ rotatedFrom: old.key.id, permissions: ['email:verify'], accountId: ACCOUNT });
  expect(await keys.get(old.key.id)).toMatchObject({ rotatedTo: next.key.id, status: 'active' });
  expect(await auth(fx.store, old.secret)).toMatchObject({ ok: true });
  expect(await auth(fx.store, next.secret)).toMatchObject({ ok: true });
  await keys.revoke(old.key.id);
  expect(await auth(fx.store, old.secret)).toMatchObject({ code: 'revoked_api_key' });
  expect(await auth(fx.store, next.secret)).toMatchObject({ ok: true });
}

async function rotatesSuspended({ fx, keys, expect, auth, create }: ContractContext): Promise<void> {
  const old = await create();
  await keys.suspend(old.key.id, { reason: 'leaked' });
  const next = await keys.rotate(old.key.id);
  expect(next.key).toMatchObject({ status: 'active', rotatedFrom: old.key.id, permissions: ['email:verify'] });
  expect(await fx.store.findById(old.key.id)).toMatchObject({
    status: 'suspended',
    suspendedReason: 'leaked',
    rotatedTo: next.key.id,
  });
  expect(await auth(fx.store, old.secret)).toMatchObject({ status: 403, code: 'key_suspended' });
  expect(await auth(fx.store, next.secret)).toMatchObject({ ok: true });
}

async function revokesForGood({ fx, keys, expect, auth, create }: ContractContext): Promise<void> {
  const { secret, key } = await create();
  await keys.revoke(key.id);
  const revoked = (await fx.store.findById(key.id)) as ApiKeyRecord;
  expect(revoked).toMatchObject({ status: 'revoked', version: 2 });
  expect(await auth(fx.store, secret)).toMatchObject({ ok: false, status: 401, code: 'revoked_api_key' });
  const now = new Date().toISOString();
  expect(await rejection(keys.update(key.id, { name: 'back' }))).toBeInstanceOf(KeyRevokedError);
  expect(await rejection(fx.store.update(key.id, { name: 'back', updatedAt: now }))).toBeInstanceOf(KeyRevokedError);
  expect(await rejection(keys.revoke(key.id))).toBeInstanceOf(KeyRevokedError);
  expect(await fx.store.findById(key.id)).toEqual(revoked);
}

async function listsByAccount({ fx, expect, create }: ContractContext): Promise<void> {
  const a = [await create(), await create(), await create()];
  const b = await create({ accountId: 'acct_other' });
  const listed = await fx.store.listByAccount(ACCOUNT);
  expect(listed.map((r) => r.id).sort()).toEqual(a.map((k) => k.key.id).sort());
  expect((await fx.store.listByAccount('acct_other')).map((r) => r.id)).toEqual([b.key.id]);
  expect(await fx.store.listByAccount('acct_nobody')).toEqual([]);
}

// Ids and accounts a user may type with a NUL (U+0000) in them: text no row holds (PostgreSQL even refuses to compare it).
const WITH_NUL = ['key_\u0000', '\u0000', 'key_a\u0000b'];

async function findsNothingForNul({ fx, keys, expect, create }: ContractContext): Promise<void> {
  const { key } = await create();
  for (const id of [...WITH_NUL, `${key.id}\u0000`]) {
    expect((await fx.store.findById(id)) ?? null).toBe(null);
    expect(await keys.get(id)).toBe(null);
    const now = new Date().toISOString();
    expect(await rejection(fx.store.update(id, { name: 'x', updatedAt: now }))).toBeInstanceOf(KeyNotFoundError);
    expect(await rejection(keys.revoke(id))).toBeInstanceOf(KeyNotFoundError);
  }
  expect(await fx.store.listByAccount(`${ACCOUNT}\u0000`)).toEqual([]);
  expect(await fx.store.findById(key.id)).toMatchObject({ id: key.id, status: 'active', version: 1 });
}

/** Creating, finding, changing, rotating, revoking and listing keys, one caller at a time. */
export const RECORD_CASES: readonly ContractCase[] = [
  ['stores a new key at version 1 and finds it by digest and by id', storesAndFinds],
  ['refuses a second key with the same id or digest as key_conflict naming it, and keeps the first', refusesDuplicates],
  ['applies an update, bumps the version and persists it', updates],
  ['keeps a key’s rate limit, one or several named, through create, update, rotate and removal', keepsRateLimit],
  ['rotates: both keys work during the overlap and are linked both ways', rotates],
  ['rotates a suspended key: the new key works, the old one stays suspended and linked', rotatesSuspended],
  ['revokes permanently: the key never authenticates again and no write changes it', revokesForGood],
  ['lists the keys of one account, and none of another', listsByAccount],
  ['answers an id or account with a NUL character as not found, never as a store failure', findsNothingForNul],
];
