import { hmacSha256Hex, sha256Hex } from '#digest';

/**
 * The digest stores keep in place of a key: SHA-256 of the whole key, or HMAC-SHA-256 keyed by
 * `pepper` when one is configured (a stolen table is then useless without the pepper), as 64
 * lower-case hex characters. Synchronous on Node, a promise elsewhere.
 */
export function digestKey(key: string, pepper?: string): string | Promise<string> {
  return pepper ? hmacSha256Hex(pepper, key) : sha256Hex(key);
}

/**
 * The digest of a raw key, as stores keep it.
 *
 * @param pepper optional server-side secret; when set, the digest is HMAC-SHA-256 keyed by it. Default: none.
 * @example
 * await hashKey('mk_test_...') // '9f86d08...' (64 hex characters)
 */
export async function hashKey(key: string, pepper?: string): Promise<string> {
  return digestKey(key, pepper);
}
