/** The base62 alphabet keygate uses for key material: digits, upper case, lower case. */
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// 248 = 4 * 62: bytes at or above it are redrawn, so every character is equally likely.
const UNBIASED_LIMIT = 248;

/**
 * `length` base62 characters from the platform CSPRNG (`crypto.getRandomValues`), without modulo bias.
 *
 * @example
 * randomBase62(32) // 'r4Xk...' (32 characters, about 190 bits)
 */
export function randomBase62(length: number): string {
  let out = '';
  const bytes = new Uint8Array(Math.ceil(length * 1.25) + 8);
  while (out.length < length) {
    crypto.getRandomValues(bytes);
    for (let i = 0; i < bytes.length && out.length < length; i++) {
      const b = bytes[i] as number;
      if (b < UNBIASED_LIMIT) out += BASE62[b % 62];
    }
  }
  return out;
}

/**
 * `value` (an unsigned integer) in base62, left-padded with `0` to `width` characters.
 *
 * @example
 * encodeBase62(61, 2) // '0z'
 */
export function encodeBase62(value: number, width: number): string {
  let out = '';
  let n = value;
  while (n > 0) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out.padStart(width, '0');
}

/**
 * The value of base62 digit `c` (a char code), or -1 when `c` is not in the alphabet.
 *
 * @example
 * base62Digit('Z'.charCodeAt(0)) // 35
 */
export function base62Digit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 90) return c - 55;
  if (c >= 97 && c <= 122) return c - 61;
  return -1;
}
