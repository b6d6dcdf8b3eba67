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
