import {
  authenticate,
  FailedAttemptThrottle,
  generateKey,
  hashKey,
  KeyManager,
  MemoryKeyStore,
  parseKey,
  UsageRecorder,
} from 'keygate';
import { describe, expect, it } from 'vitest';

function manager(clock = () => Date.parse('2026-11-22T12:00:00Z')) {
  const store = new MemoryKeyStore();
  return { store, keys: new KeyManager({ store, clock }) };
}
const base = { accountId: 'acct_1', name: 'ci', mode: 'test' as const };
const auth = (store: MemoryKeyStore, secret: string, ip?: string) =>
  authenticate({ headers: { 'x-api-key': secret }, ip }, store);

describe('KeyManager.create', () => {
  it('returns the secret once and stores only its digest and a hint', async () => {
    const { store, keys } = manager();
    const { secret, key } = await keys.create({
      ...base,
      permissions: ['email:verify'],
      allowedIps: ['203.0.113.0/24', '2001:DB8::/32'],
    });
    expect(parseKey(secret)?.mode).toBe('test');
    expect(key).toMatchObject({
      accountId: 'acct_1',
      name: 'ci',
      mode: 'test',
      status: 'active',
      permissions: ['email:verify'],
      allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
      hint: `mk_test_…${secret.slice(-4)}`,
      createdAt: '2026-11-22T12:00:00.000Z',
      expiresAt: null,
      version: 1,
    });
    expect(key.id).toMatch(/^key_[0-9A-Za-z]{20}$/);
    expect('hash' in key).toBe(false);
    const stored = await store.findById(key.id);
    expect(stored?.hash).toBe(await hashKey(secret));
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it('uses the configured prefix and pepper, which authenticate must share', async () => {
    const store = new MemoryKeyStore();
    const keys = new KeyManager({ store, prefix: 'acme', pepper: 'server-secret' });
    const { secret } = await keys.create(base);
    expect(secret.startsWith('acme_test_')).toBe(true);
    const req = { headers: { 'x-api-key': secret } };
    expect((await authenticate(req, store, { prefix: 'acme', pepper: 'server-secret' })).ok).toBe(true);
    expect(await authenticate(req, store, { prefix: 'acme' })).toMatchObject({ code: 'invalid_api_key' });
  });

  it.each([
    [{ ...base, accountId: '' }, 'accountId'],
    [{ ...base, name: '  ' }, 'name'],
    [{ ...base, name: 'a\u0000b' }, 'name'],
    [{ ...base, mode: 'prod' }, 'mode'],
    [{ ...base, permissions: 'email:verify' }, 'permissions'],
    [{ ...base, permissions: ['ok', 'has space'] }, 'permissions[1]'],
    [{ ...base, allowedIps: ['10.0.0.0/8', '10/8'] }, 'allowedIps[1]'],
    [{ ...base, allowedIps: ['::1/129'] }, 'allowedIps[0]'],
    [{ ...base, expiresAt: 'tomorrow' }, 'expiresAt'],
    [{ ...base, expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
    [{ ...base, metadata: [] }, 'metadata'],
  ])('refuses %j with a typed error naming %s, and writes nothing', async (input, field) => {
    const { store, keys } = manager();
    await expect(keys.create(input as never)).rejects.toMatchObject({
      name: 'InvalidInputError',
      code: 'invalid_input',
      field,
    });
    expect(await store.listByAccount('acct_1')).toEqual([]);
  });
});

describe('KeyManager.get, list and update', () => {
  it('gets by id, lists by account oldest first, and returns null for an unknown id', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    const { keys } = manager(() => (t += 1000));
    const a = await keys.create({ ...base, name: 'a' });
    const b = await keys.create({ ...base, name: 'b' });
    await keys.create({ ...base, accountId: 'acct_2', name: 'c' });
    expect(await keys.get(a.key.id)).toEqual(a.key);
    expect(await keys.get('key_nope')).toBeNull();
    expect((await keys.list('acct_1')).map((k) => k.name)).toEqual(['a', 'b']);
    expect(b.key.createdAt > a.key.createdAt).toBe(true);
  });

  it('changes name, permissions, allow list, expiry and metadata, bumping the version', async () => {
    const { store, keys } = manager();
    const { secret, key } = await keys.create({ ...base, allowedIps: ['203.0.113.0/24'] });
    expect((await auth(store, secret, '198.51.100.1')).status).toBe(403);
    const updated = await keys.update(key.id, {
      name: 'renamed',
      permissions: ['email:score'],
      allowedIps: [],
      expiresAt: '2027-01-01T00:00:00Z',
      metadata: { team: 'billing' },
    });
    expect(updated).toMatchObject({
      name: 'renamed',
      permissions: ['email:score'],
      allowedIps: [],
      expiresAt: '2027-01-01T00:00:00.000Z',
      metadata: { team: 'billing' },
      version: 2,
    });
    expect((await auth(store, secret, '198.51.100.1')).ok).toBe(true);
  });

  it.each([
    [{ allowedIps: ['hello'] }, 'allowedIps[0]'],
    [{ mode: 'live' }, 'mode'],
    [{ status: 'active' }, 'status'],
    [{ accountId: 'other' }, 'accountId'],
    [{}, 'changes'],
  ])('refuses %j naming %s, and changes nothing', async (changes, field) => {
    const { keys } = manager();
    const { key } = await keys.create(base);
    await expect(keys.update(key.id, changes as never)).rejects.toMatchObject({ code: 'invalid_input', field });
    expect(await keys.get(key.id)).toEqual(key);
  });

  it('refuses an unknown id with key_not_found', async () => {
    const { keys } = manager();
    await expect(keys.update('key_nope', { name: 'x' })).rejects.toMatchObject({ code: 'key_not_found', field: 'id' });
    await expect(keys.revoke('key_nope')).rejects.toMatchObject({ code: 'key_not_found' });
    await expect(keys.rotate('key_nope')).rejects.toMatchObject({ code: 'key_not_found' });
  });
});

describe('revocation is permanent', () => {
  it('a revoked key never authenticates again and no operation restores or changes it', async () => {
    const { store, keys } = manager();
    const { secret, key } = await keys.create(base);
    expect((await auth(store, secret)).ok).toBe(true);
    const revoked = await keys.revoke(key.id);
    expect(revoked).toMatchObject({ status: 'revoked', revokedAt: '2026-11-22T12:00:00.000Z' });
    expect(await auth(store, secret)).toMatchObject({ status: 401, code: 'revoked_api_key' });
    await expect(keys.revoke(key.id)).rejects.toMatchObject({ code: 'key_revoked' });
    await expect(keys.update(key.id, { name: 'back' })).rejects.toMatchObject({ code: 'key_revoked' });
    await expect(keys.rotate(key.id)).rejects.toMatchObject({ code: 'key_revoked' });
    // Not even the store's own update can write status back: the store refuses any change to a revoked record.
    await expect(store.update(key.id, { status: 'revoked', updatedAt: 'x' })).rejects.toMatchObject({
      code: 'key_revoked',
    });
    expect(await keys.get(key.id)).toEqual(revoked);
    expect(await auth(store, secret)).toMatchObject({ code: 'revoked_api_key' });
  });
});

describe('rotation', () => {
  it('creates a linked key with the same permissions, allow list, mode and expiry; both work until the old one is revoked', async () => {
    const { store, keys } = manager();
    const old = await keys.create({
      ...base,
      mode: 'live',
      permissions: ['email:verify', 'contacts:find'],
      allowedIps: ['203.0.113.0/24'],
      expiresAt: '2027-06-01T00:00:00Z',
      metadata: { app: 'crm' },
    });
    const next = await keys.rotate(old.key.id);
    expect(next.secret).not.toBe(old.secret);
    expect(next.key).toMatchObject({
      accountId: old.key.accountId,
      name: old.key.name,
      mode: 'live',
      permissions: old.key.permissions,
      allowedIps: old.key.allowedIps,
      expiresAt: old.key.expiresAt,
      metadata: { app: 'crm' },
      rotatedFrom: old.key.id,
    });
    expect((await keys.get(old.key.id))?.rotatedTo).toBe(next.key.id);
    // The overlap: both keys work.
    expect((await auth(store, old.secret, '203.0.113.1')).ok).toBe(true);
    expect((await auth(store, next.secret, '203.0.113.1')).ok).toBe(true);
    await keys.revoke(old.key.id);
    expect(await auth(store, old.secret, '203.0.113.1')).toMatchObject({ code: 'revoked_api_key' });
    expect((await auth(store, next.secret, '203.0.113.1')).ok).toBe(true);
  });

  it('refuses to rotate a key twice while its successor is active', async () => {
    const { keys } = manager();
    const old = await keys.create(base);
    const next = await keys.rotate(old.key.id);
    await expect(keys.rotate(old.key.id)).rejects.toMatchObject({ code: 'key_conflict' });
    await keys.revoke(next.key.id);
    const again = await keys.rotate(old.key.id);
    expect(again.key.rotatedFrom).toBe(old.key.id);
  });
});

describe('undefined means unchanged', () => {
  it('update(id, { expiresAt: undefined, ... }) keeps the expiry; only null clears it', async () => {
    const { keys } = manager();
    const { key } = await keys.create({ ...base, expiresAt: '2027-01-01T00:00:00Z' });
    const renamed = await keys.update(key.id, { name: 'renamed', expiresAt: undefined });
    expect(renamed).toMatchObject({ name: 'renamed', expiresAt: '2027-01-01T00:00:00.000Z' });
    await expect(keys.update(key.id, { expiresAt: undefined })).rejects.toMatchObject({ field: 'changes' });
    expect((await keys.get(key.id))?.expiresAt).toBe('2027-01-01T00:00:00.000Z');
    expect((await keys.update(key.id, { expiresAt: null })).expiresAt).toBeNull();
  });

  it.each([
    ['name', { name: undefined }],
    ['permissions', { permissions: undefined }],
    ['allowedIps', { allowedIps: undefined }],
    ['metadata', { metadata: undefined }],
  ])('an undefined %s next to a real change leaves it as it was', async (field, changes) => {
    const { keys } = manager();
    const { key } = await keys.create({
      ...base,
      permissions: ['email:verify'],
      allowedIps: ['203.0.113.0/24'],
      metadata: { team: 'a' },
      expiresAt: '2027-01-01T00:00:00Z',
    });
    const other = field === 'name' ? { permissions: ['email:score'] } : { name: 'other' };
    const updated = await keys.update(key.id, { ...other, ...changes });
    const { [field as keyof typeof key]: kept } = key;
    expect(updated[field as keyof typeof updated]).toEqual(kept);
    expect(updated.expiresAt).toBe('2027-01-01T00:00:00.000Z');
  });
});

describe('no raw key in an error message', () => {
  const secret = generateKey({ mode: 'live' });

  const leaks: Array<[string, Record<string, unknown>]> = [
    ['mode', { ...base, mode: secret }],
    ['mode', { ...base, mode: secret.slice(8) }],
    ['permissions[0]', { ...base, permissions: [`${secret.slice(8)} `] }],
    ['allowedIps[0]', { ...base, allowedIps: [secret.slice(8)] }],
  ];
  const held: Array<[string, Record<string, unknown>]> = [
    ['permissions[1]', { ...base, permissions: ['ok', `${secret}!`] }],
  ];
  const refusedWithoutEcho = async (field: string, input: Record<string, unknown>) => {
    const { keys } = manager();
    const error = await keys.create(input as never).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_input', field });
    const text = `${(error as Error).message} ${String(error)}`;
    expect(text).not.toContain(secret.slice(8, 20));
    expect(text).not.toContain(secret.slice(-12));
  };
  it.each(leaks)('a key pasted into %s is refused without echoing it', refusedWithoutEcho);
  it.each(held)('a key pasted into %s is refused without echoing it', refusedWithoutEcho);

  it.each([
    ['a whole live key', secret],
    ['a whole test key', generateKey({ mode: 'test' })],
    ['a key of another prefix', generateKey({ prefix: 'acme', mode: 'live' })],
    ['a key inside a name', `billing:${secret}`],
    ['the random part alone', secret.slice(8, 40)],
  ])('a permission that is %s is refused, not stored, and not repeated', async (_, permission) => {
    const { store, keys } = manager();
    const error = await keys.create({ ...base, permissions: ['email:verify', permission] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_input', field: 'permissions[1]' });
    expect((error as Error).message).toMatch(/looks like an API key/);
    expect((error as Error).message).not.toContain(permission.slice(-12));
    expect(await store.listByAccount('acct_1')).toEqual([]);
  });

  it('a key pasted into the permissions of an update is refused and the record is unchanged', async () => {
    const { keys } = manager();
    const { key } = await keys.create({ ...base, permissions: ['email:verify'] });
    await expect(keys.update(key.id, { permissions: [secret] })).rejects.toMatchObject({ field: 'permissions[0]' });
    expect((await keys.get(key.id))?.permissions).toEqual(['email:verify']);
  });

  it('long permission names that are not key-shaped are still accepted', async () => {
    const { keys } = manager();
    const permissions = ['email:verify_live_batch', 'contacts:find/all', 'a'.repeat(31), 'billing_test_run'];
    const { key } = await keys.create({ ...base, permissions });
    expect(key.permissions).toEqual(permissions);
  });

  it('the mode error says what kind of value it got (type and length)', async () => {
    const { keys } = manager();
    const error = (await keys.create({ ...base, mode: secret as never }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`${secret.length} characters`);
  });

  const optionLeaks: Array<[string, () => unknown]> = [
    ['timeoutMs', () => authenticate({ headers: {} }, new MemoryKeyStore(), { timeoutMs: secret as never })],
    ['intervalMs', () => new UsageRecorder({ store: new MemoryKeyStore(), intervalMs: secret as never })],
    ['max', () => new FailedAttemptThrottle({ max: secret as never })],
  ];
  const optionsHeld: Array<[string, () => unknown]> = [
    ['rotationDays', () => new KeyManager({ store: new MemoryKeyStore(), rotationDays: secret as never })],
    ['mode', () => generateKey({ mode: secret as never })],
  ];
  const optionRefusedWithoutEcho = async (field: string, call: () => unknown) => {
    const error = await (async () => call())().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'invalid_input', field });
    expect((error as Error).message).not.toContain(secret.slice(8, 20));
  };
  it.each(optionLeaks)('a key given as the %s option is refused without echoing it', optionRefusedWithoutEcho);
  it.each(optionsHeld)('a key given as the %s option is refused without echoing it', optionRefusedWithoutEcho);
});
