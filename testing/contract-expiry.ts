import { type ApiKeyRecord, authenticate, hashKey, KeyManager, type WritableKeyStore } from 'keygate';
import { ACCOUNT, type ContractCase, type ContractContext } from './contract-context.js';

const HOUR_MS = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The store another process would read through: the fixture's `peer` when it has one (a second
 * instance over the same data), otherwise `store` itself, which the suite never wraps in a cache.
 */
function reader({ fx }: ContractContext): WritableKeyStore {
  return fx.peer ?? fx.store;
}

/** Authenticates `secret` against `store` as if the time were `atMs` (the clock of `authenticate`). */
function authAt(store: WritableKeyStore, secret: string, atMs: number) {
  return authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.7' }, store, {
    timeoutMs: 2000,
    clock: () => atMs,
  });
}

/** The key's `expiresAt` as each way of reading it answers: by id, by digest and by account, from `store`. */
async function expiriesOf(store: WritableKeyStore, id: string, secret: string): Promise<unknown[]> {
  const byId = await store.findById(id);
  const byHash = await store.findByHash(await hashKey(secret));
  const listed = (await store.listByAccount(ACCOUNT)).find((r) => r.id === id);
  return [byId?.expiresAt, byHash?.expiresAt, listed?.expiresAt];
}

async function keepsExpiry(c: ContractContext): Promise<void> {
  const { fx, keys, expect } = c;
  const first = Date.now() + 2 * HOUR_MS;
  const { secret, key } = await keys.create({
    accountId: ACCOUNT,
    name: 'expiring',
    mode: 'test',
    expiresAt: iso(first),
  });
  expect(key.expiresAt).toBe(iso(first));
  expect(await expiriesOf(reader(c), key.id, secret)).toEqual([iso(first), iso(first), iso(first)]);
  const second = first + HOUR_MS;
  expect((await keys.update(key.id, { expiresAt: iso(second) })).expiresAt).toBe(iso(second));
  expect(await expiriesOf(reader(c), key.id, secret)).toEqual([iso(second), iso(second), iso(second)]);
  // A write that does not name the expiry keeps it.
  await keys.update(key.id, { name: 'renamed' });
  await keys.suspend(key.id);
  await keys.resume(key.id);
  expect(await expiriesOf(reader(c), key.id, secret)).toEqual([iso(second), iso(second), iso(second)]);
  expect((await keys.update(key.id, { expiresAt: null })).expiresAt).toBe(null);
  expect(await expiriesOf(reader(c), key.id, secret)).toEqual([null, null, null]);
  expect(await fx.store.findById(key.id)).toMatchObject({ expiresAt: null, version: 6 });
}

async function refusesExpired(c: ContractContext): Promise<void> {
  const { keys, expect } = c;
  const end = Date.now() + HOUR_MS;
  const { secret, key } = await keys.create({ accountId: ACCOUNT, name: 'short', mode: 'test', expiresAt: iso(end) });
  expect(await authAt(reader(c), secret, end - 1)).toMatchObject({ ok: true });
  expect(await authAt(reader(c), secret, end)).toMatchObject({ ok: false, status: 401, code: 'expired_api_key' });
  const later = end + HOUR_MS;
  await keys.update(key.id, { expiresAt: iso(later) });
  expect(await authAt(reader(c), secret, end)).toMatchObject({ ok: true });
  expect(await authAt(reader(c), secret, later)).toMatchObject({ code: 'expired_api_key' });
  await keys.update(key.id, { expiresAt: null });
  expect(await authAt(reader(c), secret, later + 365 * 24 * HOUR_MS)).toMatchObject({ ok: true });
}

async function rotatesWithGrace(c: ContractContext): Promise<void> {
  const { fx, expect } = c;
  const nowMs = Date.now();
  const keys = new KeyManager({ store: fx.store, clock: () => nowMs });
  const graceMs = HOUR_MS;
  const old = await keys.create({ accountId: ACCOUNT, name: 'rotated', mode: 'test' });
  const next = await keys.rotate(old.key.id, { graceMs });
  const other = reader(c);
  expect(await other.findById(old.key.id)).toMatchObject({ expiresAt: iso(nowMs + graceMs), rotatedTo: next.key.id });
  expect(await other.findByHash(await hashKey(old.secret))).toMatchObject({ expiresAt: iso(nowMs + graceMs) });
  expect(await other.findById(next.key.id)).toMatchObject({ expiresAt: null, rotatedFrom: old.key.id });
  // During the grace both keys work; after it the old one is refused, the new one is not.
  expect(await authAt(other, old.secret, nowMs + graceMs - 1)).toMatchObject({ ok: true });
  expect(await authAt(other, old.secret, nowMs + graceMs)).toMatchObject({ ok: false, code: 'expired_api_key' });
  expect(await authAt(other, next.secret, nowMs + graceMs)).toMatchObject({ ok: true });
}

async function graceKeepsEarlierExpiry(c: ContractContext): Promise<void> {
  const { fx, expect } = c;
  const nowMs = Date.now();
  const keys = new KeyManager({ store: fx.store, clock: () => nowMs });
  const end = nowMs + 10 * 60_000;
  const old = await keys.create({ accountId: ACCOUNT, name: 'soon', mode: 'test', expiresAt: iso(end) });
  const next = await keys.rotate(old.key.id, { graceMs: HOUR_MS });
  const other = reader(c);
  // The grace never lengthens a key's life, and the successor inherits the expiry it had.
  expect(await other.findById(old.key.id)).toMatchObject({ expiresAt: iso(end) });
  expect(await other.findById(next.key.id)).toMatchObject({ expiresAt: iso(end) });
  expect(await authAt(other, old.secret, end)).toMatchObject({ code: 'expired_api_key' });
  expect(await authAt(other, next.secret, end)).toMatchObject({ code: 'expired_api_key' });
  expect((await other.findById(old.key.id)) as ApiKeyRecord).toEqual(await fx.store.findById(old.key.id));
}

/** A key's expiry through create, update, rotation with a grace and a fresh read, and its refusal once reached. */
export const EXPIRY_CASES: readonly ContractCase[] = [
  ['keeps a key’s expiry through create, update (set, change, clear) and writes that do not name it', keepsExpiry],
  ['refuses a key as expired_api_key from its expiry on, and follows a changed or cleared expiry', refusesExpired],
  [
    'rotates with a grace: the old key expires at now + grace, read by another instance, which refuses it after',
    rotatesWithGrace,
  ],
  [
    'rotates with a grace longer than the key’s own life: the earlier expiry stays, on both keys',
    graceKeepsEarlierExpiry,
  ],
];
