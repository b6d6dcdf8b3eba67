import { authenticate, InvalidInputError, MemoryCreditLedger, MemoryRateLimiter } from 'keygate';
import { resolveAuthOptions } from 'keygate/adapter-kit';
import { checkOptionNames, closestName } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';
import { seededStore } from '../support/fixtures.js';

function refusal(run: () => unknown): InvalidInputError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return err as InvalidInputError;
  }
  throw new Error('expected an InvalidInputError, nothing was thrown');
}

describe('authenticate refuses an option it does not know, naming the nearest one', () => {
  const ledger = new MemoryCreditLedger();
  const limiter = new MemoryRateLimiter();
  it.each([
    [{ permission: ['admin'] }, 'permission', 'permissions'],
    [{ permisions: ['admin'] }, 'permisions', 'permissions'],
    [{ credit: { ledger } }, 'credit', 'credits'],
    [{ ratelimit: { limiter } }, 'ratelimit', 'rateLimit'],
    [{ timeout: 500 }, 'timeout', 'timeoutMs'],
    [{ Header: 'x-key' }, 'Header', 'header'],
    [{ credits: { leger: ledger } }, 'credits.leger', 'ledger'],
    [{ credits: { ledger, holdTtl: 1000 } }, 'credits.holdTtl', 'holdTtlMs'],
    [{ rateLimit: { limiter, defaults: { limit: 1, windowMs: 1000 } } }, 'rateLimit.defaults', 'default'],
  ])('%o is refused: field %s, did you mean %s', (options, field, near) => {
    const err = refusal(() => resolveAuthOptions(options as never));
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe(field);
    expect(err.issues).toEqual([expect.objectContaining({ field, reason: 'unknown_option' })]);
    expect(err.message).toContain(`did you mean \`${near}\`?`);
  });

  it('a name with nothing near lists every option instead of guessing', () => {
    const err = refusal(() => resolveAuthOptions({ store: {} } as never));
    expect(err.field).toBe('store');
    expect(err.message).not.toContain('did you mean');
    expect(err.message).toContain('the options are permissions, header, from');
  });

  it('authenticate itself throws at the first call: a misspelt permission never lets a request through', async () => {
    const s = await seededStore(() => Date.now());
    const request = { headers: { 'x-api-key': s.open.secret }, ip: '203.0.113.7' };
    await expect(authenticate(request, s.store, { permission: ['admin'] } as never)).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'permission',
    });
    expect(await authenticate(request, s.store, { permissions: ['admin'] })).toMatchObject({
      ok: false,
      code: 'insufficient_permissions',
    });
  });

  it('every known option passes, and resolved options are their own resolution', () => {
    const resolved = resolveAuthOptions({
      permissions: [],
      header: 'x-api-key',
      from: 'header',
      prefix: 'mk',
      pepper: 'p',
      timeoutMs: 10,
      clock: Date.now,
      onResult: () => {},
      throttle: undefined,
      telemetry: undefined,
      rateLimit: null,
      credits: null,
    });
    expect(resolveAuthOptions(resolved as never)).toBe(resolved);
  });
});

describe('closestName and checkOptionNames', () => {
  it.each([
    ['permisions', 'permissions'],
    ['ttl', 'ttlMs'],
    ['allowIps', 'allowedIps'],
    ['TIMEOUTMS', 'timeoutMs'],
    ['tiemoutMs', 'timeoutMs'],
  ])('%s is within two edits of %s', (name, near) => {
    expect(closestName(name, ['permissions', 'ttlMs', 'allowedIps', 'timeoutMs'])).toBe(near);
  });

  it('three edits away is no suggestion', () => {
    expect(closestName('abcdef', ['abcxyz'])).toBeUndefined();
    expect(closestName('ab', ['abcde'])).toBeUndefined();
  });

  it('the nearest wins; a tie goes to the name listed first', () => {
    expect(closestName('limt', ['limits', 'limit'])).toBe('limit');
    expect(closestName('ab', ['ax', 'ay'])).toBe('ax');
  });

  it('refuses options that are not an object, and takes undefined as none', () => {
    expect(() => checkOptionNames(undefined, ['a'], 'x')).not.toThrow();
    for (const bad of [null, 5, 'a', [1]]) {
      expect(refusal(() => checkOptionNames(bad, ['a'], 'thing'))).toMatchObject({
        field: 'options',
        issues: [expect.objectContaining({ reason: 'wrong_type' })],
      });
    }
  });

  it('a key-shaped member name is never repeated in the error', async () => {
    const s = await seededStore(() => Date.now());
    const err = refusal(() => checkOptionNames({ [s.open.secret]: 1 }, ['a'], 'thing'));
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain(s.open.secret);
  });
});
