import { derToRawSignature } from './der.js';
import type { PublicKeyRing } from './public-keys.js';

/** The header naming the key GitHub signed with. */
export const KEY_ID_HEADER = 'github-public-key-identifier';
/** The header carrying the base64 ASN.1 DER ECDSA signature over the raw body. */
export const SIGNATURE_HEADER = 'github-public-key-signature';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const KEY_ID = /^[A-Za-z0-9_-]{1,200}$/;

function base64Bytes(text: string): Uint8Array | null {
  if (text.length > 200 || !BASE64.test(text)) return null;
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

/** What checking a request's signature found: it holds, it does not, or GitHub's keys could not be had. */
export type SignatureCheck = 'valid' | 'invalid' | 'unavailable';

/**
 * Whether `body` carries a valid signature of one of GitHub's published keys, by the request's
 * `Github-Public-Key-Identifier` and `Github-Public-Key-Signature` headers. Web Crypto only.
 */
export async function checkSignature(
  headers: Headers,
  body: Uint8Array<ArrayBuffer>,
  ring: PublicKeyRing,
): Promise<SignatureCheck> {
  const id = headers.get(KEY_ID_HEADER)?.trim() ?? '';
  const signature = base64Bytes(headers.get(SIGNATURE_HEADER)?.trim() ?? '');
  if (!KEY_ID.test(id) || !signature) return 'invalid';
  const raw = derToRawSignature(signature);
  if (!raw) return 'invalid';
  const found = await ring.find(id);
  if ('unavailable' in found) return 'unavailable';
  if ('unknown' in found) return 'invalid';
  const ok = await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, found.key, raw, body);
  return ok ? 'valid' : 'invalid';
}
