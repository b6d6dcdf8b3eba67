// The KeyManager writes one audit entry per action to a store that holds an audit log, with who did
// it (in the key write itself where the store takes it there, after it otherwise); reads them back
// with `audit`; and never lets an audit failure undo or fail a key write.
import {
  type ApiKeyRecord,
  type AuditEntryInput,
  type AuditLog,
  CachedKeyStore,
  capabilityOf,
  type KeygateEvent,
  KeyManager,
  KeyStoreUnavailableError,
  MemoryKeyStore,
  UnsupportedError,
  type WritableKeyStore,
} from 'keygate';
import { CAPABILITIES, type KeyPatch, type WriteOptions } from 'keygate/store-kit';
import { afterEach, describe, expect, it, vi } from 'vitest';

const NOW = Date.UTC(2026, 10, 24, 18, 0, 0);

function manager(store: WritableKeyStore = new MemoryKeyStore(), onEvent?: (e: KeygateEvent) => void) {
  return new KeyManager({ store, clock: () => NOW, ...(onEvent && { onEvent }) });
}

/** A store whose audit log fails every append, as a database that went away after the key write would. */
function storeWithFailingAudit(): WritableKeyStore {
  const inner = new MemoryKeyStore();
  const log: AuditLog = {
    append: async (_entry: AuditEntryInput) => {
      throw new KeyStoreUnavailableError('PostgreSQL key store failed: "connection reset"');
    },
    list: async () => [],
    prune: async () => ({ deleted: 0 }),
  };
  return Object.assign(Object.create(inner), {
    [CAPABILITIES]: { ...inner[CAPABILITIES], audit: log },
  }) as WritableKeyStore;
}

/** A store without an audit log. */
function storeWithoutAudit(): WritableKeyStore {
  const inner = new MemoryKeyStore();
  return {
    findByHash: (hash) => inner.findByHash(hash),
    findById: (id) => inner.findById(id),
    listByAccount: (accountId) => inner.listByAccount(accountId),
    insert: (record) => inner.insert(record),
    update: (id, patch, condition) => inner.update(id, patch, condition),
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('KeyManager audit entries', () => {
  it('writes key.created with name, mode and permissions, actor api by default, never the secret or digest', async () => {
    const store = new MemoryKeyStore();
    const keys = manager(store);
    const { secret, key } = await keys.create({
      accountId: 'acct_1',
      name: 'ci',
      mode: 'live',
      permissions: ['email:verify'],
    });
    const [entry] = await keys.audit({ accountId: 'acct_1' });
    expect(entry).toEqual({
      id: entry?.id,
      at: new Date(NOW).toISOString(),
      accountId: 'acct_1',
      keyId: key.id,
      action: 'key.created',
      actor: { type: 'api' },
      changes: {
        name: { before: null, after: 'ci' },
        mode: { before: null, after: 'live' },
        permissions: { before: null, after: ['email:verify'] },
      },
    });
    const stored = await store.findById(key.id);
    const text = JSON.stringify(entry);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(stored?.hash);
    expect(text).not.toContain(key.hint);
  });

  it('writes key.updated with before and after of each changed field only', async () => {
    const keys = manager();
    const { key } = await keys.create({
      accountId: 'acct_1',
      name: 'ci',
      mode: 'test',
      allowedIps: ['203.0.113.0/24'],
      metadata: { team: 'a' },
    });
    await keys.update(
      key.id,
      { name: 'ci', allowedIps: [], metadata: { team: 'b' }, rateLimit: { limit: 10, windowMs: 60_000 } },
      { actor: { type: 'cli', id: 'alice' }, address: '198.51.100.4' },
    );
    const [entry] = await keys.audit({ accountId: 'acct_1', keyId: key.id });
    expect(entry).toMatchObject({
      action: 'key.updated',
      actor: { type: 'cli', id: 'alice' },
      address: '198.51.100.4',
      changes: {
        allowedIps: { before: ['203.0.113.0/24'], after: [] },
        metadata: { before: { team: 'a' }, after: { team: 'b' } },
        rateLimit: { before: null, after: { limit: 10, windowMs: 60_000 } },
      },
    });
    expect(Object.keys(entry?.changes ?? {})).toEqual(['allowedIps', 'metadata', 'rateLimit']);
  });

  it('redacts a token kept in metadata when it reaches a change', async () => {
    const keys = manager();
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    await keys.update(key.id, { metadata: { webhookToken: 'whsec_do_not_log', owner: 'ops' } });
    const [entry] = await keys.audit({ accountId: 'acct_1' });
    expect(entry?.changes?.metadata).toEqual({
      before: {},
      after: { webhookToken: '[redacted]', owner: 'ops' },
    });
  });

  it('writes key.rotated on the old key with the new key id, and key.revoked with the status', async () => {
    const keys = manager();
    const { key: old } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    const { key: next } = await keys.rotate(old.id, { actor: { type: 'dashboard', id: 'acct_1' } });
    await keys.revoke(old.id, { actor: { type: 'cli' } });
    const entries = await keys.audit({ accountId: 'acct_1', keyId: old.id });
    expect(entries.map((e) => [e.action, e.actor, e.changes])).toEqual([
      ['key.revoked', { type: 'cli' }, { status: { before: 'active', after: 'revoked' } }],
      ['key.rotated', { type: 'dashboard', id: 'acct_1' }, { rotatedTo: { before: null, after: next.id } }],
      ['key.created', { type: 'api' }, expect.anything()],
    ]);
  });

  it('writes key.imported for an imported key', async () => {
    const keys = manager();
    const source = manager();
    const { secret } = await source.create({ accountId: 'acct_1', name: 'legacy', mode: 'live' });
    const key = await keys.import(
      { accountId: 'acct_1', name: 'legacy', secret },
      { actor: { type: 'cli', id: 'ops' } },
    );
    const [entry] = await keys.audit({ accountId: 'acct_1' });
    expect(entry).toMatchObject({ action: 'key.imported', keyId: key.id, actor: { type: 'cli', id: 'ops' } });
    expect(JSON.stringify(entry)).not.toContain(secret);
  });

  it('writes nothing for a call refused for its input, nor for a bad actor (refused before the key write)', async () => {
    const keys = manager();
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    await expect(keys.update(key.id, { allowedIps: ['10/8'] })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(keys.update(key.id, { name: 'x' }, { actor: { type: 'robot' as 'api' } })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'actor.type',
    });
    await expect(keys.revoke(key.id, { address: '' })).rejects.toMatchObject({ field: 'address' });
    await expect(
      keys.create({ accountId: 'acct_1', name: 'b', mode: 'test' }, { actr: { type: 'cli' } } as never),
    ).rejects.toMatchObject({ field: 'actr' });
    expect((await keys.get(key.id))?.name).toBe('ci');
    expect(await keys.list('acct_1')).toHaveLength(1);
    expect((await keys.audit({ accountId: 'acct_1' })).map((e) => e.action)).toEqual(['key.created']);
  });

  it('reads what was written through a CachedKeyStore over the same store', async () => {
    const store = new MemoryKeyStore();
    const keys = manager(new CachedKeyStore(store));
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    expect(capabilityOf(new CachedKeyStore(store), 'audit')).toBe(capabilityOf(store, 'audit'));
    expect(await manager(store).audit({ accountId: 'acct_1', keyId: key.id })).toHaveLength(1);
  });

  it('records a host action with recordAudit, and answers null over a store without an audit log', async () => {
    const keys = manager();
    const entry = await keys.recordAudit({
      accountId: 'acct_1',
      action: 'dashboard.signed_in',
      actor: { type: 'dashboard', id: 'acct_1' },
      address: '203.0.113.9',
    });
    expect(await keys.audit({ accountId: 'acct_1' })).toEqual([entry]);
    expect(await manager(storeWithoutAudit()).recordAudit({ accountId: 'acct_1', action: 'dashboard.signed_in' })).toBe(
      null,
    );
  });
});

describe('KeyManager over a store without an audit log', () => {
  it('writes keys as before, and audit throws UnsupportedError naming store', async () => {
    const keys = manager(storeWithoutAudit());
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    const err = await keys.audit({ accountId: 'acct_1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedError);
    expect(err).toMatchObject({ code: 'unsupported', field: 'store' });
  });

  it('still refuses a bad query as invalid_input', async () => {
    await expect(manager(storeWithoutAudit()).audit({ accountId: 'acct_1', limit: 0 })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'limit',
    });
  });
});

describe('KeyManager when the audit append fails after the key write', () => {
  it('keeps the key write, resolves, and reports audit.failed through onEvent', async () => {
    const events: KeygateEvent[] = [];
    const keys = manager(storeWithFailingAudit(), (e) => events.push(e));
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    const revoked = await keys.revoke(key.id);
    expect(revoked.status).toBe('revoked');
    expect((await keys.get(key.id))?.status).toBe('revoked');
    expect(events.filter((e) => e.type === 'audit.failed')).toEqual([
      expect.objectContaining({
        action: 'key.created',
        keyId: key.id,
        accountId: 'acct_1',
        errorCode: 'key_store_unavailable',
      }),
      expect.objectContaining({ action: 'key.revoked', keyId: key.id, errorCode: 'key_store_unavailable' }),
    ]);
  });

  it('without onEvent, says so on console.error, with ids and never the secret', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const keys = manager(storeWithFailingAudit());
    const { secret, key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    expect(errors).toHaveBeenCalledTimes(1);
    const line = String(errors.mock.calls[0]?.[0]);
    expect(line).toContain(`key.created on ${key.id}`);
    expect(line).toContain('key_store_unavailable');
    expect(line).not.toContain(secret);
  });
});

/** `store` with its audit log, but not as `auditedWrites`: a store of one's own, to which the manager appends after each write. */
function appendingAfter(inner: MemoryKeyStore): WritableKeyStore {
  const { auditedWrites: _, ...capabilities } = inner[CAPABILITIES];
  return Object.assign(Object.create(inner), { [CAPABILITIES]: capabilities }) as WritableKeyStore;
}

/** `inner`, with the options of every write it was handed and the appends made to its log. */
function watched(inner: MemoryKeyStore) {
  const options: (WriteOptions | undefined)[] = [];
  const log = capabilityOf(inner, 'audit') as AuditLog;
  const appended: AuditEntryInput[] = [];
  const spyLog: AuditLog = {
    append: (entry) => {
      appended.push(entry);
      return log.append(entry);
    },
    list: (query) => log.list(query),
    prune: (args) => log.prune(args),
  };
  const store = Object.assign(Object.create(inner), {
    [CAPABILITIES]: { ...inner[CAPABILITIES], audit: spyLog, auditedWrites: spyLog },
    insert: (record: ApiKeyRecord, o?: WriteOptions) => {
      options.push(o);
      return inner.insert(record, o);
    },
    update: (id: string, patch: KeyPatch, o?: WriteOptions) => {
      options.push(o);
      return inner.update(id, patch, o);
    },
  }) as WritableKeyStore;
  return { store, options, appended };
}

// The fields key.updated compares, in its order: the stored records before and after, as JSON.
const UPDATED = ['name', 'permissions', 'allowedIps', 'expiresAt', 'metadata', 'rateLimit'] as const;
function updatedChanges(before: ApiKeyRecord, after: ApiKeyRecord) {
  const out: Record<string, { before: unknown; after: unknown }> = {};
  for (const f of UPDATED) {
    if (JSON.stringify(before[f] ?? null) !== JSON.stringify(after[f] ?? null)) {
      out[f] = { before: before[f] ?? null, after: after[f] ?? null };
    }
  }
  return out;
}
const createdChanges = (r: ApiKeyRecord) => ({
  name: { before: null, after: r.name },
  mode: { before: null, after: r.mode },
  permissions: { before: null, after: r.permissions },
});

describe('KeyManager over a store that writes audit entries in its writes', () => {
  it('hands each action its entry with the key write (WriteOptions.audit), and appends none after', async () => {
    const { store, options, appended } = watched(new MemoryKeyStore());
    const keys = manager(store);
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    await keys.update(key.id, { name: 'ci-2' });
    await keys.rotate(key.id);
    await keys.revoke(key.id);
    const entries = await keys.audit({ accountId: 'acct_1' });
    expect(appended).toEqual([]);
    // The rotation's entry goes with its claim, the write that changes the old key; the successor's insert carries none.
    expect(options.map((o) => o?.audit?.map((e) => e.action) ?? [])).toEqual([
      ['key.created'],
      ['key.updated'],
      ['key.rotated'],
      [],
      ['key.revoked'],
    ]);
    expect(options.flatMap((o) => o?.audit ?? []).reverse()).toEqual(entries);
  });

  it.each([
    ['writes them in the write', (inner: MemoryKeyStore) => inner],
    ['only holds a log, appended after each write', appendingAfter],
  ])(
    'records, over a store that %s, the changes of each action byte for byte as computed from the records stored before and after it',
    async (_how, wrap) => {
      const inner = new MemoryKeyStore();
      const keys = manager(wrap(inner));
      const read = async (id: string) => (await inner.findById(id)) as ApiKeyRecord;
      const { key } = await keys.create({
        accountId: 'acct_1',
        name: 'ci',
        mode: 'live',
        permissions: ['email:verify'],
        allowedIps: ['203.0.113.0/24'],
        metadata: { team: 'a' },
      });
      const expected: unknown[] = [createdChanges(await read(key.id))];
      const before = await read(key.id);
      await keys.update(key.id, {
        name: 'ci-2',
        allowedIps: [],
        expiresAt: '2030-01-01T00:00:00.000Z',
        metadata: { team: 'b' },
        rateLimit: [{ name: 'burst', limit: 5, windowMs: 1_000 }],
      });
      expected.push(updatedChanges(before, await read(key.id)));
      await keys.suspend(key.id, { reason: 'unpaid invoice' });
      expected.push({
        status: { before: 'active', after: 'suspended' },
        suspendedReason: { before: null, after: 'unpaid invoice' },
      });
      await keys.resume(key.id);
      expected.push({ status: { before: 'suspended', after: 'active' } });
      const next = await keys.rotate(key.id, { graceMs: 60_000 });
      expected.push({
        rotatedTo: { before: null, after: next.key.id },
        expiresAt: { before: '2030-01-01T00:00:00.000Z', after: new Date(NOW + 60_000).toISOString() },
      });
      await keys.revoke(key.id);
      expected.push({ status: { before: 'active', after: 'revoked' } });
      const source = await manager().create({ accountId: 'acct_1', name: 'legacy', mode: 'test' });
      const imported = await keys.import({ accountId: 'acct_1', name: 'legacy', secret: source.secret });
      expected.push(createdChanges(await read(imported.id)));
      const entries = (await keys.audit({ accountId: 'acct_1' })).reverse();
      expect(entries.map((e) => e.action)).toEqual([
        'key.created',
        'key.updated',
        'key.suspended',
        'key.resumed',
        'key.rotated',
        'key.revoked',
        'key.imported',
      ]);
      expect(entries.map((e) => JSON.stringify(e.changes))).toEqual(expected.map((c) => JSON.stringify(c)));
      expect(entries.every((e) => e.at === new Date(NOW).toISOString())).toBe(true);
    },
  );

  it('records a rotation with the write that changes the old key: a process that dies before the new key is stored leaves the entry of the shortened expiry', async () => {
    const inner = new MemoryKeyStore();
    const keys = manager(inner);
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    // The successor's insert never returns: the process is gone between the two writes.
    const dying = Object.assign(Object.create(inner), { insert: () => new Promise(() => {}) }) as WritableKeyStore;
    void manager(dying).rotate(key.id, { graceMs: 60_000 });
    await vi.waitFor(async () => expect((await inner.findById(key.id))?.rotatedTo).toBeTruthy());
    const old = (await inner.findById(key.id)) as ApiKeyRecord;
    expect(old.expiresAt).toBe(new Date(NOW + 60_000).toISOString());
    const [rotated] = await keys.audit({ accountId: 'acct_1', keyId: key.id });
    expect(rotated).toMatchObject({
      action: 'key.rotated',
      changes: {
        rotatedTo: { before: null, after: old.rotatedTo },
        expiresAt: { before: null, after: old.expiresAt },
      },
    });
  });

  it('records the release of a rotation whose new key could not be stored, and leaves the old key as it was', async () => {
    const inner = new MemoryKeyStore();
    const keys = manager(inner);
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    const failing = Object.assign(Object.create(inner), {
      insert: async () => {
        throw new KeyStoreUnavailableError('PostgreSQL key store failed: "connection reset"');
      },
    }) as WritableKeyStore;
    await expect(manager(failing).rotate(key.id, { graceMs: 60_000 })).rejects.toThrow(KeyStoreUnavailableError);
    expect(await inner.findById(key.id)).toMatchObject({ rotatedTo: null, expiresAt: null });
    const entries = await keys.audit({ accountId: 'acct_1', keyId: key.id });
    expect(entries.map((e) => e.action)).toEqual(['key.updated', 'key.rotated', 'key.created']);
    const claimed = entries[1]?.changes?.rotatedTo?.after;
    expect(entries[0]?.changes).toEqual({
      rotatedTo: { before: claimed, after: null },
      expiresAt: { before: new Date(NOW + 60_000).toISOString(), after: null },
    });
  });

  it('stores no entry and reports nothing when the key write fails', async () => {
    const events: KeygateEvent[] = [];
    const inner = new MemoryKeyStore();
    const keys = manager(inner, (e) => events.push(e));
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    const failing = Object.assign(Object.create(inner), {
      update: async () => {
        throw new KeyStoreUnavailableError('PostgreSQL key store failed: "connection reset"');
      },
    }) as WritableKeyStore;
    await expect(manager(failing, (e) => events.push(e)).revoke(key.id)).rejects.toBeInstanceOf(
      KeyStoreUnavailableError,
    );
    expect((await keys.audit({ accountId: 'acct_1' })).map((e) => e.action)).toEqual(['key.created']);
    expect(events.map((e) => e.type)).toEqual(['key.created']);
  });

  it('keeps a write whose entry cannot be made (metadata nested deeper than an entry keeps), and reports audit.failed', async () => {
    const events: KeygateEvent[] = [];
    const keys = manager(new MemoryKeyStore(), (e) => events.push(e));
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    let deep: Record<string, unknown> = { end: true };
    for (let i = 0; i < 25; i++) deep = { deeper: deep };
    expect(await keys.update(key.id, { metadata: deep })).toMatchObject({ version: 2 });
    expect((await keys.audit({ accountId: 'acct_1' })).map((e) => e.action)).toEqual(['key.created']);
    expect(events.map((e) => e.type)).toEqual(['key.created', 'key.updated', 'audit.failed']);
    expect(events.at(-1)).toMatchObject({ action: 'key.updated', keyId: key.id, errorCode: 'invalid_input' });
  });
});
