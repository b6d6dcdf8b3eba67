import { InvalidInputError } from 'keygate';

const encoder = new TextEncoder();

/** Shortest secret accepted, in bytes (UTF-8 for a string): 256 bits, the HMAC-SHA-256 key size. */
export const MIN_SECRET_BYTES = 32;

/**
 * The dashboard secret as bytes, refused with `InvalidInputError` (field `secret`) when it is not a
 * string or byte array of at least 32 bytes.
 */
export function secretBytes(secret: unknown): Uint8Array {
  const bytes = typeof secret === 'string' ? encoder.encode(secret) : secret instanceof Uint8Array ? secret : undefined;
  if (!bytes || bytes.length < MIN_SECRET_BYTES) {
    throw new InvalidInputError(
      'secret',
      `secret must be a string or Uint8Array of at least ${MIN_SECRET_BYTES} bytes (e.g. 32 random bytes as hex)`,
    );
  }
  return bytes;
}

/** Base64url without padding, for cookies and URLs. */
export function toBase64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * The bytes of base64url text, or null when it is not canonical base64url: the last character of a
 * value whose length is not a multiple of 4 carries unused bits, and text with any of them set decodes
 * to the same bytes as the canonical text. Refused, so that one value has exactly one spelling.
 */
export function fromBase64url(text: string): Uint8Array | null {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return toBase64url(bytes) === text ? bytes : null;
}

/** Random bytes as base64url: `n` bytes of the platform CSPRNG. */
export function randomId(n = 18): string {
  return toBase64url(crypto.getRandomValues(new Uint8Array(n)));
}

/**
 * HMAC-SHA-256 under the dashboard secret. Every use names its purpose, which is part of the signed
 * text, so a value signed for one purpose (a session) never verifies for another (a sign-in link).
 */
export interface Signer {
  /** The base64url MAC of `data` for `purpose`. */
  sign(purpose: string, data: string): Promise<string>;
  /**
   * Whether `mac` is the MAC of `data` for `purpose`: its decoded bytes (canonical base64url only)
   * compared in constant time by Web Crypto.
   */
  verify(purpose: string, data: string, mac: string): Promise<boolean>;
}

/** A {@link Signer} over `secret` (already checked by {@link secretBytes}); the key is imported once. */
export function createSigner(secret: Uint8Array): Signer {
  let key: Promise<CryptoKey> | undefined;
  const hmacKey = () => {
    key ??= crypto.subtle.importKey('raw', secret as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ]);
    return key;
  };
  const message = (purpose: string, data: string) => encoder.encode(`keygate-dashboard/${purpose}\n${data}`);
  return {
    async sign(purpose, data) {
      const mac = await crypto.subtle.sign('HMAC', await hmacKey(), message(purpose, data));
      return toBase64url(new Uint8Array(mac));
    },
    async verify(purpose, data, mac) {
      const bytes = fromBase64url(mac);
      if (bytes?.length !== 32) return false;
      return crypto.subtle.verify('HMAC', await hmacKey(), bytes as BufferSource, message(purpose, data));
    },
  };
}

/**
 * A signed value: `<payload>.<mac>`, the payload base64url JSON. Returns the parsed payload, or null
 * when the text is malformed or the MAC does not verify.
 */
export async function openSigned(signer: Signer, purpose: string, text: string): Promise<unknown> {
  if (typeof text !== 'string' || text.length > 4096) return null;
  const dot = text.indexOf('.');
  if (dot < 1 || dot !== text.lastIndexOf('.')) return null;
  const payload = text.slice(0, dot);
  if (!(await signer.verify(purpose, payload, text.slice(dot + 1)))) return null;
  const bytes = fromBase64url(payload);
  if (!bytes) return null;
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

/** Seals `value` as `<payload>.<mac>` for {@link openSigned}. */
export async function seal(signer: Signer, purpose: string, value: unknown): Promise<string> {
  const payload = toBase64url(encoder.encode(JSON.stringify(value)));
  return `${payload}.${await signer.sign(purpose, payload)}`;
}
