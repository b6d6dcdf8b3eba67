import type { DigestRuntime } from './digest.js';

const encoder = new TextEncoder();
const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
// Imported HMAC keys, one per pepper; a process has one or two peppers at most.
const hmacKeys = new Map<string, Promise<CryptoKey>>();

function toHex(buffer: ArrayBuffer): string {
  const bytes = new Uint8Array(buffer);
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i] as number];
  return out;
}

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    hmacKeys.set(secret, key);
  }
  return key;
}

/** Web Crypto implementation of the digest runtime (asynchronous). */
export const sha256Hex: DigestRuntime['sha256Hex'] = async (data) =>
  toHex(await crypto.subtle.digest('SHA-256', encoder.encode(data)));

/** Web Crypto HMAC-SHA-256 (asynchronous). */
export const hmacSha256Hex: DigestRuntime['hmacSha256Hex'] = async (secret, data) =>
  toHex(await crypto.subtle.sign('HMAC', await hmacKey(secret), encoder.encode(data)));
