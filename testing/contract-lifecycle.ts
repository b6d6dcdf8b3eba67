import { type ApiKeyRecord, KeyManager, KeyRevokedError } from 'keygate';
import { type ContractCase, type ContractContext, nextChange } from './contract-context.js';
import { rejection, sleep } from './contract-kit.js';

async function suspendsAndResumes({ fx, keys, expect, auth, create }: ContractContext): Promise<void> {
  const { secret, key } = await create();
  await keys.suspend(key.id, { reason: 'unpaid invoice' });
  const stored = (await fx.store.findById(key.id)) as ApiKeyRecord;
  expect(stored).toMatchObject({ status: 'suspended', suspendedReason: 'unpaid invoice', version: 2 });
  expect(typeof stored.suspendedAt).toBe('string');
  expect(await auth(fx.store, secret)).toMatchObject({ ok: false, status: 403, code: 'key_suspended' });
  await keys.resume(key.id);
  expect(await fx.store.findById(key.id)).toMatchObject({
    status: 'active',
    suspendedAt: null,
    suspendedReason: null,
    version: 3,
  });
  expect(await auth(fx.store, secret)).toMatchObject({ ok: true });
}

async function revokesFromSuspended({ fx, keys, expect, auth, create }: ContractContext): Promise<void> {
  const { secret, key } = await create();
  await keys.suspend(key.id);
  await keys.revoke(key.id);
  const revoked = (await fx.store.findById(key.id)) as ApiKeyRecord;
  expect(revoked).toMatchObject({ status: 'revoked', version: 3 });
  expect(await auth(fx.store, secret)).toMatchObject({ status: 401, code: 'revoked_api_key' });
  const now = new Date().toISOString();
  const back = { status: 'active', suspendedAt: null, suspendedReason: null, updatedAt: now } as const;
  expect(await rejection(keys.resume(key.id))).toBeInstanceOf(KeyRevokedError);
  expect(await rejection(keys.suspend(key.id))).toBeInstanceOf(KeyRevokedError);
  expect(await rejection(fx.store.update(key.id, back))).toBeInstanceOf(KeyRevokedError);
  expect(await fx.store.findById(key.id)).toEqual(revoked);
}

async function sameProcessCache({ fx, keys, expect, auth, cache, create }: ContractContext): Promise<void> {
  const { secret, key } = await create();
  const cached = cache(fx.store);
  expect(await auth(cached, secret)).toMatchObject({ ok: true });
  await keys.suspend(key.id);
  expect(await auth(cached, secret)).toMatchObject({ code: 'key_suspended' });
  await keys.resume(key.id);
  expect(await auth(cached, secret)).toMatchObject({ ok: true });
}

async function otherInstanceCache(c: ContractContext): Promise<void> {
  const { fx, expect, auth, cache, create, patienceMs } = c;
  if (!fx.peer) throw new Error('options.channel is set, so the fixture must have a peer');
  const peerKeys = new KeyManager({ store: fx.peer });
  const { secret, key } = await create();
  const cached = cache(fx.store);
  const suspended = nextChange(fx.store, key.id, 2, patienceMs);
  await sleep(50); // lets a lazily opened channel finish subscribing (and announce its resync)
  expect(await auth(cached, secret)).toMatchObject({ ok: true });
  await peerKeys.suspend(key.id, { reason: 'from another process' });
  expect(await suspended).toMatchObject({ type: 'updated', id: key.id, version: 2 });
  expect(await auth(cached, secret)).toMatchObject({ code: 'key_suspended' });
  const resumed = nextChange(fx.store, key.id, 3, patienceMs);
  await peerKeys.resume(key.id);
  expect(await resumed).toMatchObject({ type: 'updated', id: key.id, version: 3 });
  expect(await auth(cached, secret)).toMatchObject({ ok: true });
}

/** Suspension, resumption and revocation from suspended, and their reaching caches, as `options` declares. */
export function lifecycleCases(options: { channel?: boolean }): ContractCase[] {
  const cases: ContractCase[] = [
    ['suspends (403 key_suspended) and resumes a key, keeping the time and reason', suspendsAndResumes],
    ['revokes a suspended key permanently: no resume, suspend or write brings it back', revokesFromSuspended],
    ['tells a CachedKeyStore of a suspension and a resumption in the same process', sameProcessCache],
  ];
  if (options.channel) {
    cases.push([
      'tells a CachedKeyStore of a suspension and a resumption made through another instance',
      otherInstanceCache,
    ]);
  }
  return cases;
}
