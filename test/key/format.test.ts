import { generateKey, hashKey, isWellFormedKey, KeyManager, keyHint, MemoryKeyStore, parseKey } from 'keygate';
import { describe, expect, it } from 'vitest';

const BASE62 = /^[0-9A-Za-z]+$/;

describe('generateKey', () => {
  it.each(['live', 'test'] as const)('makes %s keys as <prefix>_<mode>_<32 random><6 checksum>', (mode) => {
    const key = generateKey({ mode });
    expect(key).toMatch(new RegExp(`^mk_${mode}_[0-9A-Za-z]{38}$`));
    expect(parseKey(key)).toMatchObject({ prefix: 'mk', mode });
  });

  it('uses a custom prefix', () => {
    const key = generateKey({ prefix: 'acme', mode: 'live' });
    expect(key.startsWith('acme_live_')).toBe(true);
    expect(parseKey(key, 'acme')?.mode).toBe('live');
    expect(parseKey(key)).toBeNull();
  });

  it.each([['MK'], ['m_k'], [''], ['a'.repeat(17)], ['1mk']])(
    'refuses prefix %j with an error naming prefix',
    (prefix) => {
      expect(() => generateKey({ prefix })).toThrow(
        expect.objectContaining({ code: 'invalid_input', field: 'prefix' }),
      );
    },
  );

  it('refuses an unknown mode', () => {
    expect(() => generateKey({ mode: 'prod' as never })).toThrow(expect.objectContaining({ field: 'mode' }));
  });

  it('spreads random characters evenly over the base62 alphabet (no modulo bias)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const random = generateKey().slice(8, 40);
      for (const c of random) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(counts.size).toBe(62);
    // 128,000 draws over 62 symbols: about 2065 each. A `byte % 62` draw would give the first
    // eight symbols about 25% more; allow 10% either way.
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(2065 * 0.9);
      expect(n).toBeLessThan(2065 * 1.1);
    }
  });

  it('never repeats', () => {
    const keys = new Set(Array.from({ length: 10_000 }, () => generateKey()));
    expect(keys.size).toBe(10_000);
  });
});

describe('parseKey', () => {
  const key = generateKey({ mode: 'live' });

  it('splits a key into its parts', () => {
    const parsed = parseKey(key);
    expect(parsed).toEqual({ prefix: 'mk', mode: 'live', random: key.slice(8, 40), checksum: key.slice(40) });
    expect(parsed?.random).toMatch(BASE62);
  });

  const swapped = (i: number) => key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
  it.each([
    ['empty', ''],
    ['truncated by one', key.slice(0, -1)],
    ['one character too many', `${key}a`],
    ['wrong prefix', `xk${key.slice(2)}`],
    ['wrong mode', key.replace('_live_', '_prod_')],
    ['a typo in the random part', swapped(20)],
    ['a typo in the checksum', swapped(44)],
    ['a character outside base62', `${key.slice(0, 20)}-${key.slice(21)}`],
    ['two keys in one header', `${key}, ${key}`],
    ['non-ASCII', `${key.slice(0, 20)}é${key.slice(21)}`],
    ['upper-case mode', key.replace('_live_', '_LIVE_')],
  ])('returns null for %s', (_, value) => {
    expect(parseKey(value)).toBeNull();
  });

  it.each([[undefined], [null], [42], [{}], [['mk_live_x']]])('returns null for non-string %j', (value) => {
    expect(parseKey(value)).toBeNull();
  });

  it('catches every single-character substitution of a key', () => {
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    let caught = 0;
    let tried = 0;
    for (let i = 8; i < key.length; i++) {
      for (const c of alphabet) {
        if (c === key[i]) continue;
        tried++;
        if (parseKey(key.slice(0, i) + c + key.slice(i + 1)) === null) caught++;
      }
    }
    expect(caught).toBe(tried);
  });
});

describe('hashKey', () => {
  it('is the SHA-256 of the whole key, as hex', async () => {
    // SHA-256("abc"), FIPS 180-2 test vector.
    expect(await hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('is HMAC-SHA-256 keyed by the pepper when one is given', async () => {
    // RFC 4231 test case 2.
    expect(await hashKey('what do ya want for nothing?', 'Jefe')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('differs between keys and between peppers', async () => {
    const key = generateKey();
    const digests = new Set([
      await hashKey(key),
      await hashKey(generateKey()),
      await hashKey(key, 'p1'),
      await hashKey(key, 'p2'),
    ]);
    expect(digests.size).toBe(4);
  });
});

describe('keyHint', () => {
  it('shows prefix, mode and the last four characters only', () => {
    const key = generateKey({ mode: 'test' });
    expect(keyHint(key)).toBe(`mk_test_…${key.slice(-4)}`);
  });
});

describe('the #digest runtime condition', () => {
  it('picks Node one-shot hashing on Node: the digest is ready synchronously', async () => {
    const node = await import('#digest');
    expect(typeof node.sha256Hex('abc')).toBe('string');
    expect(node.sha256Hex('abc')).toBe(await hashKey('abc'));
  });

  it('the Web Crypto implementation agrees with it', async () => {
    const web = await import('../../src/runtime/web-digest.js');
    const key = generateKey();
    expect(await web.sha256Hex(key)).toBe(await hashKey(key));
    expect(await web.hmacSha256Hex('pepper', key)).toBe(await hashKey(key, 'pepper'));
  });
});

describe('a custom prefix argument', () => {
  const key = generateKey({ mode: 'live' });

  it.each([['mké'], ['mk\u0301'], ['ＭＫ'], ['MK'], [''], ['a'.repeat(17)], ['m_k']])(
    'parseKey and isWellFormedKey refuse prefix %j as KeyManager and generateKey do',
    (prefix) => {
      const refused = expect.objectContaining({ name: 'InvalidInputError', code: 'invalid_input', field: 'prefix' });
      expect(() => parseKey(key, prefix)).toThrow(refused);
      expect(() => isWellFormedKey(key, prefix)).toThrow(refused);
      expect(() => generateKey({ prefix })).toThrow(refused);
      expect(() => new KeyManager({ store: new MemoryKeyStore(), prefix })).toThrow(refused);
    },
  );

  it('a non-ASCII prefix never makes a key well-formed, even one built with it', () => {
    // The CRC-32 reads characters as bytes, so 'mké' and 'mk' + another byte used to agree on the checksum.
    expect(() => isWellFormedKey(`mké_live_${key.slice(8)}`, 'mké')).toThrow(
      expect.objectContaining({ field: 'prefix' }),
    );
  });
});
