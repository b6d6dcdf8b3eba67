import { type ApiKeyRecord, type AuthRequest, authenticate, generateKey } from 'keygate';
import { describe, expect, it } from 'vitest';
import { countingStore, failingStore, hangingStore, seededStore } from '../support/fixtures.js';

const INSIDE = '203.0.113.7';

describe('authenticate follows the check order of the contract', async () => {
  const clock = Date.now();
  const s = await seededStore(() => clock);
  const unknown = generateKey({ mode: 'live' });
  const req = (key: string | undefined, ip: string | null = INSIDE): AuthRequest => ({
    headers: key === undefined ? {} : { 'x-api-key': key },
    ip,
  });

  it.each([
    ['1: header absent', req(undefined), 401, 'missing_api_key'],
    ['1: header empty', req(''), 401, 'missing_api_key'],
    ['1: header only whitespace', req('  \t '), 401, 'missing_api_key'],
    ['2: not a key', req('hello'), 401, 'malformed_api_key'],
    ['2: bad checksum', req(`${s.valid.secret.slice(0, -1)}x`), 401, 'malformed_api_key'],
    ['2: several values in one header', req(`${s.valid.secret}, ${s.open.secret}`), 401, 'malformed_api_key'],
    ['4: well-formed but unknown', req(unknown), 401, 'invalid_api_key'],
    ['5: revoked', req(s.revoked.secret), 401, 'revoked_api_key'],
    ['7: address outside the allow list', req(s.valid.secret, '198.51.100.1'), 403, 'ip_not_allowed'],
    ['7: address missing', req(s.valid.secret, null), 403, 'ip_not_allowed'],
    ['7: address unparseable', req(s.valid.secret, 'unknown'), 403, 'ip_not_allowed'],
  ])('%s', async (_, request, status, code) => {
    const result = await authenticate(request, s.store, { permissions: ['email:verify'] });
    expect(result).toMatchObject({ ok: false, status, code });
  });

  it('3: a store that throws gives 503 key_store_unavailable, never an allow', async () => {
    expect(await authenticate(req(s.valid.secret), failingStore)).toMatchObject({
      status: 503,
      code: 'key_store_unavailable',
    });
  });

  it('3: a store that does not answer within the timeout gives 503', async () => {
    const result = await authenticate(req(s.valid.secret), hangingStore, { timeoutMs: 20 });
    expect(result).toMatchObject({ status: 503, code: 'key_store_unavailable' });
  });

  it.each([
    ['a record for another digest', async (r: ApiKeyRecord) => ({ ...r, hash: 'f'.repeat(64) })],
    ['a record with an unparseable allow list', async (r: ApiKeyRecord) => ({ ...r, allowedIps: ['not an ip'] })],
    ['a string', async () => 'garbage' as unknown as ApiKeyRecord],
  ])('3: a store that returns %s gives 503', async (_, corrupt) => {
    const real = (await s.store.findById(s.open.key.id)) as ApiKeyRecord;
    const result = await authenticate(req(s.open.secret), { findByHash: () => corrupt(real) });
    expect(result).toMatchObject({ status: 503, code: 'key_store_unavailable' });
  });

  it('6: a key past its expiresAt gives 401 expired_api_key', async () => {
    expect((await authenticate(req(s.expiring.secret), s.store, { clock: () => clock })).ok).toBe(true);
    const later = clock + 60_001;
    const result = await authenticate(req(s.expiring.secret), s.store, { clock: () => later });
    expect(result).toMatchObject({ status: 401, code: 'expired_api_key', key: { id: s.expiring.key.id } });
  });

  it('8: a missing permission gives 403 insufficient_permissions', async () => {
    const result = await authenticate(req(s.open.secret), s.store, { permissions: ['email:verify', 'contacts:find'] });
    expect(result).toMatchObject({ status: 403, code: 'insufficient_permissions', key: { id: s.open.key.id } });
  });

  it('the first failing check decides: revoked beats a wrong address and missing permissions', async () => {
    const result = await authenticate(req(s.revoked.secret, 'unknown'), s.store, { permissions: ['nope'] });
    expect(result).toMatchObject({ code: 'revoked_api_key' });
    const ip = await authenticate(req(s.valid.secret, '198.51.100.1'), s.store, { permissions: ['nope'] });
    expect(ip).toMatchObject({ code: 'ip_not_allowed' });
  });

  it('allows a valid key from inside its allow list, with the key public view and mode', async () => {
    const result = await authenticate(req(s.valid.secret, '::ffff:203.0.113.9'), s.store, {
      permissions: ['email:verify'],
    });
    const { ageDays: _age, rotationDue: _due, ...view } = s.valid.key;
    expect(result).toEqual({ ok: true, status: 200, key: view });
    expect(result.ok && result.key.mode).toBe('live');
    expect(result.ok && 'hash' in result.key).toBe(false);
  });

  it('allows a key with an empty allow list from any address, or none', async () => {
    for (const ip of [null, 'unknown', '192.0.2.1', '::1']) {
      expect((await authenticate(req(s.open.secret, ip), s.store)).ok).toBe(true);
    }
  });
});

describe('the key header', async () => {
  const s = await seededStore();
  const ok = (r: { ok: boolean }) => r.ok;

  it.each([
    ['lower-case name', { 'x-api-key': s.open.secret }, true],
    ['mixed-case name in a plain record', { 'X-Api-Key': s.open.secret }, true],
    ['upper-case name in a plain record', { 'X-API-KEY': s.open.secret }, true],
    ['value padded with spaces and tabs', { 'x-api-key': ` \t${s.open.secret}\t ` }, true],
    ['a one-value array', { 'x-api-key': [s.open.secret] }, true],
    ['two values as an array', { 'x-api-key': [s.open.secret, s.open.secret] }, false],
    ['the same key twice, comma-joined', { 'x-api-key': `${s.open.secret},${s.open.secret}` }, false],
    ['non-ASCII', { 'x-api-key': `${s.open.secret.slice(0, -1)}é` }, false],
    ['20 KB', { 'x-api-key': 'a'.repeat(20_480) }, false],
    ['a number', { 'x-api-key': 42 }, false],
    ['only in Authorization', { authorization: `Bearer ${s.open.secret}` }, false],
  ])('%s', async (_, headers, allowed) => {
    expect(ok(await authenticate({ headers: headers as never, ip: undefined }, s.store))).toBe(allowed);
  });

  it('reads a Fetch Headers object, case-insensitively', async () => {
    const headers = new Headers({ 'X-API-Key': s.open.secret });
    expect((await authenticate({ headers }, s.store)).ok).toBe(true);
    const twice = new Headers();
    twice.append('x-api-key', s.open.secret);
    twice.append('X-Api-Key', s.open.secret);
    expect(await authenticate({ headers: twice }, s.store)).toMatchObject({ code: 'malformed_api_key' });
  });

  it('uses a configured header name, matched case-insensitively', async () => {
    const options = { header: 'X-Key' };
    expect((await authenticate({ headers: { 'x-key': s.open.secret } }, s.store, options)).ok).toBe(true);
    expect(await authenticate({ headers: { 'x-api-key': s.open.secret } }, s.store, options)).toMatchObject({
      code: 'missing_api_key',
    });
  });

  it.each([
    [{ header: 'x api key' }, 'header'],
    [{ header: '' }, 'header'],
    [{ timeoutMs: -1 }, 'timeoutMs'],
    [{ permissions: [''] }, 'permissions'],
    [{ prefix: 'MK' }, 'prefix'],
    [{ pepper: '' }, 'pepper'],
  ])('refuses bad options %j naming %s', async (options, field) => {
    await expect(authenticate({ headers: {} }, s.store, options)).rejects.toMatchObject({
      code: 'invalid_input',
      field,
    });
  });
});

describe('authenticate never reaches the store for malformed keys', () => {
  it('10,000 malformed keys cause 0 lookups', async () => {
    const store = countingStore({ findByHash: async () => null });
    const key = generateKey();
    for (let i = 0; i < 10_000; i++) {
      let c = String.fromCharCode(33 + (i % 90));
      if (c === key[10]) c = c === 'a' ? 'b' : 'a';
      const bad = i % 2 ? key.slice(0, (i % 40) + 1) : `${key.slice(0, 10)}${c}${key.slice(11)}`;
      await authenticate({ headers: { 'x-api-key': bad } }, store);
    }
    expect(store.calls).toBe(0);
  });

  it('never throws for any header value or address', async () => {
    const s = await seededStore();
    const values: unknown[] = [undefined, null, '', 0, {}, [], [null], '\u0000', 'x'.repeat(100_000), s.valid.secret];
    const ips: unknown[] = [undefined, null, 42, {}, '', '::', 'x'.repeat(1000), '1.2.3.4'];
    for (const v of values) {
      for (const ip of ips) {
        const result = await authenticate({ headers: { 'x-api-key': v } as never, ip: ip as never }, s.store);
        expect(typeof result.status).toBe('number');
      }
    }
    await expect(authenticate({ headers: null as never }, s.store)).resolves.toMatchObject({ code: 'missing_api_key' });
  });
});

describe('onResult observes outcomes and cannot change them', () => {
  it('sees every result; a throwing observer changes nothing', async () => {
    const s = await seededStore();
    const seen: string[] = [];
    const options = {
      onResult: (r: { ok: boolean; status: number }) => {
        seen.push(String(r.status));
        throw new Error('observer bug');
      },
    };
    expect((await authenticate({ headers: { 'x-api-key': s.open.secret } }, s.store, options)).ok).toBe(true);
    expect((await authenticate({ headers: {} }, s.store, options)).ok).toBe(false);
    expect(seen).toEqual(['200', '401']);
  });
});
