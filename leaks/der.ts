// GitHub signs with ECDSA P-256 and sends the signature in ASN.1 DER (`SEQUENCE { INTEGER r, INTEGER
// s }`); Web Crypto verifies the raw form, r and s as 32-byte big-endian numbers side by side.
// A signature is read in its one DER encoding only: BER's other spellings of the same numbers (a long
// length, a padded integer, bytes after the sequence) are refused, so that a signature has one form.

/** Bytes of r and of s in a P-256 signature. */
const P256_SIZE = 32;
/** The order n of P-256's base point: r and s lie in [1, n - 1]. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const HALF_ORDER = P256_ORDER >> 1n;

// The INTEGER at `at` and where the next element begins, or null unless it is DER's encoding of a
// number in [1, n - 1]: a short-form length (P-256's integers take at most 33 bytes), not negative,
// and no leading zero byte but the one that keeps a high first bit from reading as a sign.
function integerAt(der: Uint8Array, at: number): { value: bigint; next: number } | null {
  if (der[at] !== 0x02) return null;
  const length = der[at + 1];
  if (length === undefined || length === 0 || length > P256_SIZE + 1) return null;
  const start = at + 2;
  const end = start + length;
  if (end > der.length) return null;
  const first = der[start] as number;
  if (first & 0x80) return null; // negative: r and s never are
  // 0x00 alone is zero; 0x00 before a byte without its high bit is a superfluous zero (not DER).
  if (first === 0 && (length === 1 || !((der[start + 1] as number) & 0x80))) return null;
  let value = 0n;
  for (let i = start; i < end; i++) value = (value << 8n) | BigInt(der[i] as number);
  return value < P256_ORDER ? { value, next: end } : null;
}

function writeBig(into: Uint8Array, value: bigint, end: number): void {
  let rest = value;
  for (let i = end - 1; rest > 0n; i--) {
    into[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
}

/**
 * The raw `r || s` form (64 bytes) of a P-256 ECDSA signature in ASN.1 DER, as Web Crypto's `verify`
 * wants it, or `null` when `der` is not the one DER encoding of a signature: a wrong tag, a length in
 * long form or that does not match, bytes after the sequence, an integer with a superfluous leading
 * zero byte, a negative one, or r or s outside [1, n - 1] (n: P-256's order).
 *
 * s is brought into the lower half (`s > n / 2` becomes `n - s`): both are valid signatures of the same
 * body and key, and GitHub does not promise to sign with the lower one, so the higher one is accepted
 * and comes out as its lower twin: one signature, one raw form.
 *
 * @example
 * derToRawSignature(new Uint8Array([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02]))?.length // 64
 * derToRawSignature(new Uint8Array([0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x02])) // null: padded r
 */
export function derToRawSignature(der: Uint8Array): Uint8Array<ArrayBuffer> | null {
  // SEQUENCE with a short-form length (the content is at most 2 + 33 + 2 + 33 = 70 bytes) and nothing after it.
  const length = der[1];
  if (der.length < 8 || der[0] !== 0x30 || length === undefined || length > 0x7f || length !== der.length - 2) {
    return null;
  }
  const r = integerAt(der, 2);
  if (!r) return null;
  const s = integerAt(der, r.next);
  if (!s || s.next !== der.length) return null;
  const raw = new Uint8Array(P256_SIZE * 2);
  writeBig(raw, r.value, P256_SIZE);
  writeBig(raw, s.value > HALF_ORDER ? P256_ORDER - s.value : s.value, P256_SIZE * 2);
  return raw;
}
