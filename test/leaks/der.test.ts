// GitHub's signatures come in ASN.1 DER; Web Crypto verifies r || s. The conversion, proven against
// Node's own signer and verifier and against hand-made encodings at every edge: only DER's one
// encoding of a signature is read, and s always comes out in the lower half of the order.
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import fc from 'fast-check';
import { derToRawSignature } from 'keygate/leaks';
import { describe, expect, it } from 'vitest';
import { derInteger, derSequence, derSignature, lowS, P256_ORDER, signatureParts } from './support.js';

const bytesOf = (value: bigint) => Uint8Array.from(Buffer.from(value.toString(16).padStart(64, '0'), 'hex'));

const hex = (bytes: Uint8Array | null) => (bytes ? Buffer.from(bytes).toString('hex') : null);
const raw = (r: bigint, s: bigint) => hex(new Uint8Array([...bytesOf(r), ...bytesOf(s)]));
const scalar = fc.bigInt({ min: 1n, max: P256_ORDER - 1n });

describe('derToRawSignature', () => {
  it('turns any r and s in [1, n - 1], of any length and high bit, into r || s with s in the lower half', () => {
    fc.assert(
      fc.property(scalar, scalar, (r, s) => {
        expect(hex(derToRawSignature(derSignature(r, s)))).toBe(raw(r, lowS(s)));
      }),
      { numRuns: 500 },
    );
  });

  it('pads short integers on the left and drops the sign byte of a high-bit integer', () => {
    const r = P256_ORDER - 1n; // high bit set: 33 bytes in DER, 0x00 first
    const der = derSignature(r, 1n); // s = 1: one byte in DER
    expect([...der.subarray(0, 5)]).toEqual([0x30, 35 + 3, 0x02, 0x21, 0x00]);
    expect([...der.subarray(37)]).toEqual([0x02, 0x01, 0x01]);
    expect(hex(derToRawSignature(der))).toBe(raw(r, 1n));
  });

  it("verifies with Node's P-1363 verifier for signatures made by Node's DER signer", () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (let i = 0; i < 200; i++) {
      const data = Buffer.from(`report ${i}`);
      const der = sign('sha256', data, { key: privateKey, dsaEncoding: 'der' });
      const converted = derToRawSignature(der);
      expect(converted?.length).toBe(64);
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, converted as Uint8Array)).toBe(true);
    }
  });

  describe('a signature made by a P-256 key, and its other encodings', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const data = Buffer.from('[{"token":"mk_live_x","type":"keygate_api_key"}]');
    const { r, s } = signatureParts(sign('sha256', data, { key: privateKey, dsaEncoding: 'der' }));
    const canonical = derSignature(r, lowS(s));
    const rInteger = derInteger(r);
    const sInteger = derInteger(lowS(s));
    const verifies = (signature: Uint8Array | null) =>
      signature !== null && verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature);

    it('the canonical DER (low s) is read and verifies', () => {
      expect(hex(derToRawSignature(canonical))).toBe(raw(r, lowS(s)));
      expect(verifies(derToRawSignature(canonical))).toBe(true);
    });

    it('its high-S twin (s replaced by n - s, as valid) comes out as the same raw signature', () => {
      const twin = derSignature(r, P256_ORDER - lowS(s));
      expect(hex(twin)).not.toBe(hex(canonical));
      expect(hex(derToRawSignature(twin))).toBe(hex(derToRawSignature(canonical)));
    });

    const padded = (integer: number[]) => [0x02, (integer[1] as number) + 1, 0x00, ...integer.slice(2)];
    it.each<[string, () => Uint8Array]>([
      [
        'a long-form sequence length',
        () => Uint8Array.from([0x30, 0x81, canonical.length - 2, ...canonical.subarray(2)]),
      ],
      ['r with a superfluous leading zero byte', () => derSequence([...padded(rInteger), ...sInteger])],
      ['s with a superfluous leading zero byte', () => derSequence([...rInteger, ...padded(sInteger)])],
      ['a trailing byte after the sequence', () => Uint8Array.from([...canonical, 0x00])],
      ['a trailing byte inside the sequence', () => derSequence([...rInteger, ...sInteger, 0x00])],
      ['r + n in place of r', () => derSequence([...derInteger(r + P256_ORDER), ...sInteger])],
      ['s + n in place of s', () => derSequence([...rInteger, ...derInteger(lowS(s) + P256_ORDER)])],
    ])('%s is refused', (_, variant) => {
      expect(derToRawSignature(variant())).toBeNull();
    });
  });

  const one = 0x0101010101010101010101010101010101010101010101010101010101010101n;
  const valid = derSignature(one, one);
  it.each<[string, Uint8Array]>([
    ['empty input', new Uint8Array(0)],
    ['a wrong outer tag', Uint8Array.from([0x31, ...valid.subarray(1)])],
    ['a trailing byte', Uint8Array.from([...valid, 0])],
    ['a sequence length that does not match', Uint8Array.from([0x30, valid[1]! + 1, ...valid.subarray(2)])],
    ['a truncated second integer', valid.subarray(0, valid.length - 1)],
    ['a negative integer', Uint8Array.from([0x30, 6, 0x02, 1, 0x80, 0x02, 1, 0x01])],
    ['a zero integer', Uint8Array.from([0x30, 6, 0x02, 1, 0x00, 0x02, 1, 0x01])],
    ['a zero integer padded with zeros', Uint8Array.from([0x30, 7, 0x02, 2, 0x00, 0x00, 0x02, 1, 0x01])],
    ['an integer of 33 significant bytes', derSignature((1n << 256n) + one, one)],
    ['r = n', derSignature(P256_ORDER, one)],
    ['s = n', derSignature(one, P256_ORDER)],
    ['an integer with a superfluous leading zero', Uint8Array.from([0x30, 7, 0x02, 2, 0x00, 0x01, 0x02, 1, 0x01])],
    ['an integer with two leading zeros', Uint8Array.from([0x30, 8, 0x02, 3, 0x00, 0x00, 0x81, 0x02, 1, 0x01])],
    ['an integer with a long-form length', Uint8Array.from([0x30, 7, 0x02, 0x81, 1, 0x01, 0x02, 1, 0x01])],
    ['a wrong integer tag', Uint8Array.from([0x30, 6, 0x03, 1, 0x01, 0x02, 1, 0x01])],
    ['a long-form length where the short one fits', Uint8Array.from([0x30, 0x81, 6, 0x02, 1, 1, 0x02, 1, 1])],
  ])('refuses %s', (_, der) => {
    expect(derToRawSignature(der)).toBeNull();
  });
});
