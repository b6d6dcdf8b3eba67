// A stand-in for GitHub in the tests: its own P-256 key pair, the public keys JSON GitHub publishes,
// and report bodies signed the way GitHub signs them (ECDSA P-256, SHA-256, ASN.1 DER, base64).
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

export interface FakeGithub {
  readonly keyId: string;
  /** The body of `https://api.github.com/meta/public_keys/secret_scanning`. */
  readonly publicKeysJson: string;
  /** Signs `body` with this key pair: the two headers GitHub sends. */
  headers(body: string, keyId?: string): Record<string, string>;
  /** A `fetch` that serves the public keys and counts its calls. */
  readonly fetch: ((input: string) => Promise<Response>) & { calls: number };
  /** A signed POST of `reports`, as GitHub sends it. */
  request(reports: unknown, init?: { keyId?: string; body?: string; headers?: Record<string, string> }): Request;
}

export const KEYS_URL = 'https://keys.test/meta/public_keys/secret_scanning';

function pemOf(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'pem' }).toString();
}

export function fakeGithub(keyId = 'k1'): FakeGithub {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicKeysJson = JSON.stringify({
    public_keys: [
      { key_identifier: 'retired', key: pemOf(other.publicKey), is_current: false },
      { key_identifier: keyId, key: pemOf(publicKey), is_current: true },
    ],
  });
  const headers = (body: string, id = keyId) => ({
    'content-type': 'application/json',
    'github-public-key-identifier': id,
    'github-public-key-signature': sign('sha256', Buffer.from(body), { key: privateKey, dsaEncoding: 'der' }).toString(
      'base64',
    ),
  });
  const fetch = Object.assign(
    async (_input: string) => {
      fetch.calls++;
      return new Response(publicKeysJson, { headers: { 'content-type': 'application/json' } });
    },
    { calls: 0 },
  );
  return {
    keyId,
    publicKeysJson,
    headers,
    fetch,
    request(reports, init = {}) {
      const body = init.body ?? JSON.stringify(reports);
      return new Request('http://service.test/github/secret-scanning', {
        method: 'POST',
        headers: { ...headers(body, init.keyId), ...init.headers },
        body,
      });
    },
  };
}

/** One report of `token`, as GitHub words it. */
export function reportOf(token: string, url = 'https://github.com/octocat/hello/blob/abc/config.js') {
  return { token, type: 'keygate_api_key', url, source: 'content' };
}

/** P-256's order n: r and s of a signature lie in [1, n - 1], and s and n - s verify alike. */
export const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** s, or its twin n - s, whichever is in the lower half of the order. */
export const lowS = (s: bigint) => (s > P256_ORDER / 2n ? P256_ORDER - s : s);

/** A DER INTEGER of a positive number: no leading zeros, one 0x00 before a high bit. */
export function derInteger(value: bigint): number[] {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const body = [...Buffer.from(hex, 'hex')];
  if ((body[0] as number) & 0x80) body.unshift(0);
  return [0x02, body.length, ...body];
}

/** A DER SEQUENCE of `content` (short-form length). */
export const derSequence = (content: number[]) => Uint8Array.from([0x30, content.length, ...content]);

/** The DER signature of r and s. */
export const derSignature = (r: bigint, s: bigint) => derSequence([...derInteger(r), ...derInteger(s)]);

/** r and s of a DER signature Node made (read without checks). */
export function signatureParts(der: Uint8Array): { r: bigint; s: bigint } {
  const big = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
  const rLength = der[3] as number;
  const sLength = der[5 + rLength] as number;
  return { r: big(der.subarray(4, 4 + rLength)), s: big(der.subarray(6 + rLength, 6 + rLength + sLength)) };
}
