// The KeyManager writes one audit entry per action to a store that holds an audit log, with who did
// it; reads them back with `audit`; and never lets an audit failure undo or fail a key write.
import {
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
import { CAPABILITIES } from 'keygate/store-kit';
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
