import {
  type ApiKeyRecord,
  type AuditAction,
  type AuditEntry,
  type AuditLog,
  CachedKeyStore,
  capabilityOf,
  generateKey,
  hashKey,
  KeyConflictError,
  KeyNotFoundError,
  KeyRevokedError,
  type WritableKeyStore,
} from 'keygate';
import { auditId, freezeAuditEntry, validAuditEntry } from 'keygate/store-kit';
import type { ContractCase, ContractContext } from './contract-context.js';
import { fresh, rejection } from './contract-kit.js';

// A store that writes a write's audit entries (`WriteOptions.audit`) in the write itself keeps both
// or neither: every refused write (a duplicate, a stale version, a missing or revoked key, a bad
// entry) leaves no entry, and every write that stands has every field of its entries.

const at = (second: number) => new Date(Date.UTC(2026, 10, 24, 18, 0, second)).toISOString();

/** An entry as `KeyManager` makes it, every field set (`keyId` left out with `keyId: null`). */
function entryOf(accountId: string, keyId: string | null, action: AuditAction, n: number): AuditEntry {
  return freezeAuditEntry(
    auditId(),
    validAuditEntry({
      at: at(n),
      accountId,
      ...(keyId !== null && { keyId }),
      action,
      actor: n % 2 ? { type: 'cli', id: 'alice' } : { type: 'dashboard', id: 'ops@example.com' },
      changes: {
        name: { before: 'audited', after: `audited — ${n}` },
        metadata: { before: { owner: 'a' }, after: { owner: 'b', nested: { n, none: null } } },
      },
      address: n % 2 ? '203.0.113.7' : '2001:db8::7',
    }),
  );
}

/** A record of `accountId` like `template`, with an id and digest of its own. */
async function recordOf(template: ApiKeyRecord, accountId: string): Promise<ApiKeyRecord> {
  return { ...template, id: fresh('key', 'audited'), hash: await hashKey(generateKey()), accountId, version: 1 };
}

async function bothOrNeither({ fx, expect, create }: ContractContext): Promise<void> {
  const log = capabilityOf(fx.store, 'auditedWrites') as AuditLog;
  const accountId = fresh('acct', 'audited');
  const template = (await fx.store.findById((await create()).key.id)) as ApiKeyRecord;
  const record = await recordOf(template, accountId);
  const written: AuditEntry[] = [];
  const listed = async () => log.list({ accountId, limit: 1_000 });
  const update = (id: string, name: string, options: { ifVersion?: number; audit: AuditEntry[] }) =>
    fx.store.update(id, { name, updatedAt: new Date().toISOString() }, options);

  // An insert and its entry.
  const created = entryOf(accountId, record.id, 'key.created', 1);
  expect(await fx.store.insert(record, { audit: [created] })).toMatchObject({ id: record.id, version: 1 });
  written.unshift(created);
  expect(await listed()).toEqual(written);

  // Inserts refused by a duplicate id or digest: no entry.
  const other = { ...record, hash: await hashKey(generateKey()) };
  const sameId = await rejection(fx.store.insert(other, { audit: [entryOf(accountId, record.id, 'key.created', 2)] }));
  expect(sameId).toBeInstanceOf(KeyConflictError);
  const twin = { ...record, id: fresh('key', 'twin') };
  const sameDigest = await rejection(fx.store.insert(twin, { audit: [entryOf(accountId, twin.id, 'key.created', 3)] }));
  expect(sameDigest).toBeInstanceOf(KeyConflictError);
  expect(await listed()).toEqual(written);

  // An update and its entry; updates refused by a stale version or a missing key: no entry.
  const renamed = entryOf(accountId, record.id, 'key.updated', 4);
  expect(await update(record.id, 'renamed', { ifVersion: 1, audit: [renamed] })).toMatchObject({ version: 2 });
  written.unshift(renamed);
  const stale = await rejection(
    update(record.id, 'stale', { ifVersion: 1, audit: [entryOf(accountId, record.id, 'key.updated', 5)] }),
  );
  expect(stale).toBeInstanceOf(KeyConflictError);
  const missingId = fresh('key', 'missing');
  const missing = await rejection(
    update(missingId, 'none', { audit: [entryOf(accountId, missingId, 'key.updated', 6)] }),
  );
  expect(missing).toBeInstanceOf(KeyNotFoundError);
  expect(await listed()).toEqual(written);
  expect(await fx.store.findById(record.id)).toMatchObject({ name: 'renamed', version: 2 });

  // Two entries with one write (one of them the account's, with no key); then a revoked key: no entry.
  const revoked = entryOf(accountId, record.id, 'key.revoked', 7);
  const leaked = entryOf(accountId, null, 'key.leaked', 8);
  const now = new Date().toISOString();
  await fx.store.update(record.id, { status: 'revoked', revokedAt: now, updatedAt: now }, { audit: [revoked, leaked] });
  written.unshift(leaked, revoked);
  const late = await rejection(update(record.id, 'late', { audit: [entryOf(accountId, record.id, 'key.updated', 9)] }));
  expect(late).toBeInstanceOf(KeyRevokedError);
  expect(await listed()).toEqual(written);
  expect(await log.list({ accountId, keyId: record.id })).toEqual(written.filter((e) => e.keyId === record.id));

  // An entry the store refuses (a change of the digest): invalid_input naming the field, no key written.
  const bad = { ...entryOf(accountId, record.id, 'key.created', 10), changes: { hash: { before: null, after: 'x' } } };
  const refused = await recordOf(template, accountId);
  const invalid = await rejection(fx.store.insert(refused, { audit: [bad as AuditEntry] }));
  expect(invalid).toMatchObject({ code: 'invalid_input', field: 'changes.hash' });
  expect((await fx.store.findById(refused.id)) ?? null).toBe(null);
  expect(await listed()).toEqual(written);
}

async function racingWriters({ fx, expect, create }: ContractContext): Promise<void> {
  const log = capabilityOf(fx.store, 'auditedWrites') as AuditLog;
  const accountId = fresh('acct', 'audited_race');
  const template = (await fx.store.findById((await create()).key.id)) as ApiKeyRecord;
  const record = await recordOf(template, accountId);
  await fx.store.insert(record);
  const stores: WritableKeyStore[] = [fx.store, fx.peer ?? fx.store];
  // Writers that lose a race read again and write again (Redis, D1): each entry is still written once.
  const entries = Array.from({ length: 10 }, (_, i) => entryOf(accountId, record.id, 'key.updated', 20 + i));
  await Promise.all(
    entries.map((entry, i) =>
      (stores[i % 2] as WritableKeyStore).update(
        record.id,
        { name: `racer ${i}`, updatedAt: new Date().toISOString() },
        { audit: [entry] },
      ),
    ),
  );
  expect(await fx.store.findById(record.id)).toMatchObject({ version: 11 });
  const listed = await log.list({ accountId, limit: 1_000 });
  expect(listed).toEqual([...entries].sort((a, b) => (a.id < b.id ? 1 : -1)));
}

async function throughCache({ fx, expect, create }: ContractContext): Promise<void> {
  const log = capabilityOf(fx.store, 'auditedWrites') as AuditLog;
  const cached = new CachedKeyStore(fx.store, { ttlMs: 60_000 });
  try {
    expect(capabilityOf(cached, 'auditedWrites')).toBe(log);
    const accountId = fresh('acct', 'audited_cache');
    const template = (await fx.store.findById((await create()).key.id)) as ApiKeyRecord;
    const record = await recordOf(template, accountId);
    const created = entryOf(accountId, record.id, 'key.created', 40);
    await cached.insert(record, { audit: [created] });
    expect(await log.list({ accountId })).toEqual([created]);
  } finally {
    cached.close();
  }
}

/**
 * The cases of a store that writes a write's audit entries in the write (its `auditedWrites`
 * capability, which must be its `audit` log), when it does or `declared` says it must.
 */
export function auditedWriteCases(declared: boolean | undefined): ContractCase[] {
  const when =
    (run: (c: ContractContext) => Promise<void>) =>
    async (c: ContractContext): Promise<void> => {
      const log = capabilityOf(c.fx.store, 'auditedWrites');
      if (!(declared ?? log !== undefined)) return;
      if (!log) throw new Error('options.auditedWrites is set, so the store must declare the auditedWrites capability');
      c.expect(log).toBe(capabilityOf(c.fx.store, 'audit'));
      await run(c);
    };
  return [
    [
      'writes the audit entries a write carries in that write, if it does: every field when it stands, none when a duplicate, a stale version, a missing or revoked key or a bad entry refuses it',
      when(bothOrNeither),
    ],
    ["writes each of 10 racing writers' audit entries once, if it writes entries in its writes", when(racingWriters)],
    [
      'keeps writing audit entries in the write, if it does, through a CachedKeyStore (which passes the capability on)',
      when(throughCache),
    ],
  ];
}
