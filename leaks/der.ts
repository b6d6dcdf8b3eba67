// GitHub signs with ECDSA P-256 and sends the signature in ASN.1 DER (`SEQUENCE { INTEGER r, INTEGER
// s }`); Web Crypto verifies the raw form, r and s as 32-byte big-endian numbers side by side.

/** Bytes of r and of s in a P-256 signature. */
const P256_SIZE = 32;

// One INTEGER at `at`: its magnitude (sign byte and leading zeros dropped) and where the next begins,
// or null when it is not a non-negative INTEGER of at most `size` significant bytes.
function integerAt(der: Uint8Array, at: number, size: number): { bytes: Uint8Array; next: number } | null {
  if (der[at] !== 0x02) return null;
  const length = der[at + 1];
  if (length === undefined || length === 0 || length > 0x7f) return null;
  const start = at + 2;
  const end = start + length;
  if (end > der.length) return null;
  // A set high bit in the first byte is a negative number: r and s never are.
  if ((der[start] as number) & 0x80) return null;
  let first = start;
  while (first < end && der[first] === 0) first++;
  if (end - first > size || first === end) return null; // too large, or zero (never a valid r or s)
  return { bytes: der.subarray(first, end), next: end };
}

/**
 * The raw `r || s` form (64 bytes for P-256) of an ECDSA signature in ASN.1 DER, as Web Crypto's
 * `verify` wants it, or `null` when `der` is not one: wrong tags or lengths, trailing bytes, a
 * negative, zero or oversized integer. Each integer is left-padded with zeros to `size` bytes (DER
 * drops leading zeros, so r or s may take fewer than 32 bytes, and adds one before a high bit).
 *
 * @param size bytes of each of r and s. @default 32 (P-256)
 * @example
 * derToRawSignature(new Uint8Array([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02]))?.length // 64
 */
export function derToRawSignature(der: Uint8Array, size: number = P256_SIZE): Uint8Array<ArrayBuffer> | null {
  if (der.length < 8 || der[0] !== 0x30) return null;
  // The sequence's length: short form, or long form with one byte (a P-256 signature is at most 72 bytes).
  let at = 2;
  let length = der[1] as number;
  if (length === 0x81) {
    length = der[2] as number;
    if (length < 0x80) return null; // long form where the short one fits: not DER
    at = 3;
  } else if (length > 0x7f) {
    return null;
  }
  if (at + length !== der.length) return null;
  const r = integerAt(der, at, size);
  if (!r) return null;
  const s = integerAt(der, r.next, size);
  if (!s || s.next !== der.length) return null;
  const raw = new Uint8Array(size * 2);
  raw.set(r.bytes, size - r.bytes.length);
  raw.set(s.bytes, size * 2 - s.bytes.length);
  return raw;
}
