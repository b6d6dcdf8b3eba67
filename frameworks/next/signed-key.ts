import type { PublicKey } from 'keygate';
import { InvalidInputError } from '#errors';

// The key's public view travels from the middleware to the route in one request header that Next
// forwards: `v1.<issued at, unix ms>.<base64url JSON of the view>.<base64url HMAC-SHA-256>`. The MAC
// covers a purpose label, the version, the time and the view, so a client can neither forge a view
// nor replay a captured header past `maxAgeMs`. Web Crypto only: it runs in Edge and Node middleware.

/**
 * The request header that carries the signed public view from {@link apiKeyMiddleware} to the
 * route. The middleware removes any copy a client sent before it sets its own, on every path it runs on.
 *
 * @example
 * request.headers.has(SIGNED_KEY_HEADER); // true in a route behind apiKeyMiddleware
 */
export const SIGNED_KEY_HEADER = 'x-keygate-api-key';

/** Shortest secret accepted, in bytes of UTF-8: 256 bits, the HMAC-SHA-256 key size. */
const MIN_SECRET_BYTES = 32;
const PURPOSE = 'keygate/next';
const VERSION = 'v1';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The HMAC key of a secret, refused with `InvalidInputError` (field `secret`) when it is too short. */
export function importSecret(secret: unknown): Promise<CryptoKey> {
  const bytes = typeof secret === 'string' ? encoder.encode(secret) : undefined;
  if (!bytes || bytes.length < MIN_SECRET_BYTES) {
    throw new InvalidInputError(
      'secret',
      `secret must be a string of at least ${MIN_SECRET_BYTES} bytes (e.g. 32 random bytes as hex), the same in the middleware and in apiKeyFromHeaders`,
    );
  }
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

function signedBytes(issuedAtMs: string, payload: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${PURPOSE}.${VERSION}.${issuedAtMs}.${payload}`);
}

function toBase64Url(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/** The header value for a key's view, issued at `issuedAtMs` (unix ms). */
export async function signKey(key: CryptoKey, view: PublicKey, issuedAtMs: number): Promise<string> {
  const issued = String(Math.floor(issuedAtMs));
  const payload = toBase64Url(encoder.encode(JSON.stringify(view)));
  const mac = await crypto.subtle.sign('HMAC', key, signedBytes(issued, payload));
  return `${VERSION}.${issued}.${payload}.${toBase64Url(new Uint8Array(mac))}`;
}

/** The view in a header value when its MAC holds and it was issued within `maxAgeMs` of `nowMs`; null otherwise. */
export async function verifyKey(
  key: CryptoKey,
  value: string | null,
  nowMs: number,
  maxAgeMs: number,
): Promise<PublicKey | null> {
  // Two copies of the header arrive joined by ", ", which no part may contain: five or more parts.
  const parts = value?.split('.');
  if (parts?.length !== 4) return null;
  const [version, issued, payload, mac] = parts as [string, string, string, string];
  if (version !== VERSION || !/^\d{1,16}$/.test(issued)) return null;
  if (Math.abs(nowMs - Number(issued)) > maxAgeMs) return null;
  const signature = fromBase64Url(mac);
  if (!signature || !(await crypto.subtle.verify('HMAC', key, signature, signedBytes(issued, payload)))) return null;
  const json = fromBase64Url(payload);
  try {
    return json ? (JSON.parse(decoder.decode(json)) as PublicKey) : null;
  } catch {
    return null;
  }
}
