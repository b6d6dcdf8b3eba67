import { InvalidInputError } from '#errors';

// Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
// `${id}.${timestamp}.${body}` with the base64-decoded part of a `whsec_` secret, sent as `v1,<base64>`.
// Web Crypto only, so it runs on Node, Workers, Deno and Bun alike.

const encoder = new TextEncoder();

/** The HMAC key of a `whsec_<base64>` secret; an `InvalidInputError` naming `secret` otherwise. */
export async function hmacKey(secret: unknown): Promise<CryptoKey> {
  const raw = typeof secret === 'string' && secret.startsWith('whsec_') ? decodeBase64(secret.slice(6)) : null;
  if (!raw || raw.length < 16) {
    throw new InvalidInputError('secret', 'secret must be a webhook secret: whsec_ and base64 of 16 bytes or more');
  }
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/** The bytes a signature covers: `${id}.${timestamp}.` then the body's bytes. */
export function signedContent(id: string, timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const head = encoder.encode(`${id}.${timestamp}.`);
  const out = new Uint8Array(head.length + body.length);
  out.set(head, 0);
  out.set(body, head.length);
  return out;
}

/**
 * The `webhook-signature` value of a body: `v1,` and the base64 HMAC-SHA256 of
 * `${id}.${timestamp}.${body}` under the secret (Standard Webhooks); `timestamp` in unix seconds.
 *
 * @example
 * const signature = await signWebhook({ secret: 'whsec_…', id: event.id, timestamp: 1764000000, body });
 */
export async function signWebhook(args: {
  secret: string;
  id: string;
  timestamp: number;
  body: string;
}): Promise<string> {
  const key = await hmacKey(args.secret);
  const mac = await crypto.subtle.sign(
    'HMAC',
    key,
    signedContent(args.id, String(args.timestamp), encoder.encode(args.body)),
  );
  return `v1,${encodeBase64(new Uint8Array(mac))}`;
}

/** Base64 of bytes. */
export function encodeBase64(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}

/** The bytes of base64 text, or null when it is not base64. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    const binary = atob(text);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}
