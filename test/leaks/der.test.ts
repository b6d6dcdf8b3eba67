// GitHub's signatures come in ASN.1 DER; Web Crypto verifies r || s. The conversion, proven against
// Node's own signer and verifier and against hand-made encodings at every edge.
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import fc from 'fast-check';
import { derToRawSignature } from 'keygate/leaks';
import { describe, expect, it } from 'vitest';

// A DER INTEGER of an unsigned big-endian magnitude: leading zeros dropped, one 0x00 before a high bit.
function derInteger(bytes: Uint8Array): number[] {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const body = [...bytes.subarray(i)];
  if ((body[0] as number) & 0x80) body.unshift(0);
  return [0x02, body.length, ...body];
}

function derOf(r: Uint8Array, s: Uint8Array): Uint8Array {
  const content = [...derInteger(r), ...derInteger(s)];
  const length = content.length < 0x80 ? [content.length] : [0x81, content.length];
  return new Uint8Array([0x30, ...length, ...content]);
}

const hex = (bytes: Uint8Array | null) => (bytes ? Buffer.from(bytes).toString('hex') : null);
const nonZero32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).filter((b) => b.some((x) => x !== 0));

describe('derToRawSignature', () => {
  it('turns any r and s of 32 bytes, leading zeros and high bits included, back into r || s', () => {
    fc.assert(
      fc.property(nonZero32, nonZero32, (r, s) => {
        expect(hex(derToRawSignature(derOf(r, s)))).toBe(hex(new Uint8Array([...r, ...s])));
      }),
      { numRuns: 500 },
    );
  });

  it('pads short integers on the left and drops the sign byte of a high-bit integer', () => {
    const r = new Uint8Array(32);
    r[31] = 1; // r = 1: one byte in DER
    const s = new Uint8Array(32).fill(0xff); // s with its high bit set: 33 bytes in DER, 0x00 first
    const der = derOf(r, s);
    expect([...der.subarray(0, 5)]).toEqual([0x30, 3 + 35, 0x02, 0x01, 0x01]);
    expect([...der.subarray(5, 8)]).toEqual([0x02, 0x21, 0x00]);
    expect(hex(derToRawSignature(der))).toBe(hex(new Uint8Array([...r, ...s])));
  });

  it("verifies with Node's P-1363 verifier for signatures made by Node's DER signer", () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (let i = 0; i < 200; i++) {
      const data = Buffer.from(`report ${i}`);
      const der = sign('sha256', data, { key: privateKey, dsaEncoding: 'der' });
      const raw = derToRawSignature(der);
      expect(raw?.length).toBe(64);
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, raw as Uint8Array)).toBe(true);
    }
  });

  const one = new Uint8Array(32).fill(1);
  const valid = derOf(one, one);
  it.each<[string, Uint8Array]>([
    ['empty input', new Uint8Array(0)],
    ['a wrong outer tag', Uint8Array.from([0x31, ...valid.subarray(1)])],
    ['a trailing byte', Uint8Array.from([...valid, 0])],
    ['a sequence length that does not match', Uint8Array.from([0x30, valid[1]! + 1, ...valid.subarray(2)])],
    ['a truncated second integer', valid.subarray(0, valid.length - 1)],
    ['a negative integer', Uint8Array.from([0x30, 6, 0x02, 1, 0x80, 0x02, 1, 0x01])],
    ['a zero integer', Uint8Array.from([0x30, 6, 0x02, 1, 0x00, 0x02, 1, 0x01])],
    ['an integer of 33 significant bytes', derOf(Uint8Array.from([1, ...one]), one)],
    ['a wrong integer tag', Uint8Array.from([0x30, 6, 0x03, 1, 0x01, 0x02, 1, 0x01])],
    ['a long-form length where the short one fits', Uint8Array.from([0x30, 0x81, 6, 0x02, 1, 1, 0x02, 1, 1])],
  ])('refuses %s', (_, der) => {
    expect(derToRawSignature(der)).toBeNull();
  });
});
