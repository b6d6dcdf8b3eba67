import type { ApiKeyRecord, CreatedKey } from 'keygate';
import { ACCOUNT, type ContractCase, type ContractContext } from './contract-context.js';

const now = () => new Date().toISOString();

/** The fulfilled values and the rejection reasons of `outcomes`. */
function split<T>(outcomes: PromiseSettledResult<T>[]): { won: T[]; reasons: unknown[] } {
  const won: T[] = [];
  const reasons: unknown[] = [];
  for (const o of outcomes) {
    if (o.status === 'fulfilled') won.push(o.value);
    else reasons.push(o.reason);
  }
  return { won, reasons };
}

async function losesNoUpdate({ fx, expect, create }: ContractContext): Promise<void> {
  const { key } = await create();
  const writes = Array.from({ length: 20 }, (_, i) =>
    fx.store.update(key.id, { metadata: { writer: i }, updatedAt: now() }),
  );
  const versions = (await Promise.all(writes)).map((r) => r.version).sort((x, y) => x - y);
  expect(versions).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
  expect(await fx.store.findById(key.id)).toMatchObject({ version: 21 });
}

async function revokeWinsRace({ fx, expect, auth, create }: ContractContext): Promise<void> {
  const { secret, key } = await create();
  const writes = Array.from({ length: 20 }, (_, i) =>
    i === 10
      ? fx.store.update(key.id, { status: 'revoked', revokedAt: now(), updatedAt: now() })
      : fx.store.update(key.id, { allowedIps: [], name: `w${i}`, updatedAt: now() }),
  );
  const { won, reasons } = split(await Promise.allSettled(writes));
  for (const reason of reasons) expect(reason).toMatchObject({ code: 'key_revoked', keyId: key.id });
  const final = (await fx.store.findById(key.id)) as ApiKeyRecord;
  expect(final).toMatchObject({ status: 'revoked', version: 1 + won.length });
  expect(await auth(fx.store, secret)).toMatchObject({ code: 'revoked_api_key' });
}

async function writesIfVersion({ fx, expect, create }: ContractContext): Promise<void> {
  const { key } = await create();
  const first = await fx.store.update(key.id, { name: 'first', updatedAt: now() }, { ifVersion: 1 });
  expect(first).toMatchObject({ name: 'first', version: 2 });
  const stale = fx.store.update(key.id, { name: 'lost', updatedAt: now() }, { ifVersion: 1 });
  expect(await stale.catch((err: unknown) => err)).toMatchObject({ code: 'key_conflict', keyId: key.id });
  const writes = Array.from({ length: 16 }, (_, i) =>
    fx.store.update(key.id, { name: `racer ${i}`, updatedAt: now() }, { ifVersion: 2 }),
  );
  const { won, reasons } = split(await Promise.allSettled(writes));
  expect(won).toHaveLength(1);
  for (const reason of reasons) expect(reason).toMatchObject({ code: 'key_conflict', keyId: key.id });
  expect(await fx.store.findById(key.id)).toMatchObject({ name: won[0]?.name, version: 3 });
}

async function rotatesOnce({ fx, keys, expect, auth, create }: ContractContext): Promise<void> {
  const old = await create();
  const rotations = Array.from({ length: 16 }, () => keys.rotate(old.key.id));
  const { won, reasons } = split<CreatedKey>(await Promise.allSettled(rotations));
  expect(won).toHaveLength(1);
  for (const reason of reasons) expect(reason).toMatchObject({ code: 'key_conflict', keyId: old.key.id });
  const successors = (await fx.store.listByAccount(ACCOUNT)).filter((r) => r.rotatedFrom === old.key.id);
  expect(successors.map((r) => r.id)).toEqual([won[0]?.key.id]);
  expect(await fx.store.findById(old.key.id)).toMatchObject({ rotatedTo: won[0]?.key.id, status: 'active' });
  expect(await auth(fx.store, won[0]?.secret ?? '')).toMatchObject({ ok: true });
}

/** Concurrent writers: nothing lost, revocation final, conditional writes and rotation atomic. */
export const RACE_CASES: readonly ContractCase[] = [
  ['loses no update among 20 concurrent writers', losesNoUpdate],
  ['leaves a key revoked when a revoke races 20 updates', revokeWinsRace],
  ['writes only at the expected version (ifVersion), atomically: one of 16 racing writers wins', writesIfVersion],
  ['16 concurrent rotations of one key make exactly one successor; the others get key_conflict', rotatesOnce],
];
