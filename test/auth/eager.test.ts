import {
  type AuthRequest,
  type AuthResult,
  authenticate,
  authenticateEager,
  CachedKeyStore,
  generateKey,
  MemoryRateLimiter,
} from 'keygate';
import { resolveAuthOptions } from 'keygate/adapter-kit';
import { describe, expect, it } from 'vitest';
import { countingStore, failingStore, seededStore } from '../support/fixtures.js';

const INSIDE = '203.0.113.7';
const req = (key: string | undefined, ip: string | null = INSIDE): AuthRequest => ({
  headers: key === undefined ? {} : { 'x-api-key': key },
  ip,
});
const isPromise = (r: AuthResult | Promise<AuthResult>): r is Promise<AuthResult> => 'then' in r;

describe('authenticateEager answers at once when no I/O is needed', async () => {
  const s = await seededStore();
  const cached = new CachedKeyStore(countingStore(s.store));
  const unknown = generateKey({ mode: 'live' });
  const options = { permissions: ['email:verify'] };

  it('returns a Promise for a key the cache has not seen, and the result itself once it has', async () => {
    const first = authenticateEager(req(s.valid.secret), cached, options);
    expect(isPromise(first)).toBe(true);
    expect(await first).toMatchObject({ ok: true, status: 200 });
    const second = authenticateEager(req(s.valid.secret), cached, options);
    expect(isPromise(second)).toBe(false);
    expect(second).toMatchObject({ ok: true, status: 200, key: { id: s.valid.key.id } });
  });

  it.each([
    ['a missing key', req(undefined), 'missing_api_key'],
    ['a malformed key', req('mk_live_nope'), 'malformed_api_key'],
  ])('returns the denial itself for %s, without asking the store', (_, request, code) => {
    const r = authenticateEager(request, failingStore, options);
    expect(isPromise(r)).toBe(false);
    expect(r).toMatchObject({ ok: false, status: 401, code });
  });

  it('returns a remembered unknown key and a cached key outside its allow list at once too', async () => {
    await authenticateEager(req(unknown), cached, options);
    expect(authenticateEager(req(unknown), cached, options)).toMatchObject({ code: 'invalid_api_key' });
    expect(authenticateEager(req(s.valid.secret, '198.51.100.1'), cached, options)).toMatchObject({
      status: 403,
      code: 'ip_not_allowed',
    });
  });

  it("gives exactly what authenticate gives, request for request, and both give the table's answer", async () => {
    const table: Array<[AuthRequest, string]> = [
      [req(undefined), 'missing_api_key'],
      [req('hello'), 'malformed_api_key'],
      [req(unknown), 'invalid_api_key'],
      [req(s.valid.secret), 'allowed'],
      [req(s.valid.secret, null), 'ip_not_allowed'],
      [req(s.revoked.secret), 'revoked_api_key'],
      [req(s.open.secret, '2001:db8::1'), 'allowed'],
    ];
    for (const [r, want] of table) {
      const eager = await authenticateEager(r, cached, options);
      expect(eager.ok ? 'allowed' : eager.code).toBe(want);
      expect(eager).toEqual(await authenticate(r, cached, options));
    }
  });

  it('tells onResult of every result exactly once, synchronous or not', async () => {
    const seen: string[] = [];
    const observed = { ...options, onResult: (r: AuthResult) => seen.push(r.ok ? 'allowed' : r.code) };
    authenticateEager(req('hello'), cached, observed);
    await authenticateEager(req(s.open.secret), new CachedKeyStore(s.store), observed);
    expect(seen).toEqual(['malformed_api_key', 'allowed']);
  });

  it('fails closed: a store that throws gives 503, never an allow', async () => {
    expect(await authenticateEager(req(s.valid.secret), failingStore, options)).toMatchObject({
      status: 503,
      code: 'key_store_unavailable',
    });
  });

  it('throws at once on bad options, where authenticate rejects', async () => {
    expect(() => authenticateEager(req(s.valid.secret), cached, { timeoutMs: -1 })).toThrow(/timeout/);
    await expect(authenticate(req(s.valid.secret), cached, { timeoutMs: -1 })).rejects.toThrow(/timeout/);
  });
});

describe('resolved options', async () => {
  const s = await seededStore();
  const cached = new CachedKeyStore(s.store);
  const options = {
    permissions: ['email:verify'],
    rateLimit: { limiter: new MemoryRateLimiter(), default: { limit: 2, windowMs: 60_000 } },
  };

  it('are their own resolution: resolving them again answers the same object', () => {
    const resolved = resolveAuthOptions(options);
    expect(resolveAuthOptions(resolved as never)).toBe(resolved);
    expect(resolveAuthOptions(options)).toBe(resolved);
  });

  it('authenticate as the options they came from do, rate limit included', async () => {
    const resolved = resolveAuthOptions(options) as never;
    await authenticate(req(s.valid.secret), cached, resolved);
    expect(authenticateEager(req(s.valid.secret), cached, resolved)).toMatchObject({
      ok: true,
      rateLimit: { remaining: 0 },
    });
    expect(authenticateEager(req(s.valid.secret), cached, options)).toMatchObject({
      status: 429,
      code: 'rate_limited',
    });
  });
});
