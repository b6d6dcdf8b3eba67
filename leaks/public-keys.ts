// GitHub's secret scanning signing keys, fetched from `publicKeysUrl`, imported once each, and fetched
// again when a request names a key id not seen yet (GitHub rotated), at most once per interval so
// that forged key ids cannot make this process hammer GitHub.

/**
 * Where GitHub publishes the keys it signs secret scanning reports with: the default `publicKeysUrl`.
 *
 * @example
 * githubSecretScanning({ manager: keys, publicKeysUrl: GITHUB_SECRET_SCANNING_KEYS_URL });
 */
export const GITHUB_SECRET_SCANNING_KEYS_URL = 'https://api.github.com/meta/public_keys/secret_scanning';

/** What {@link PublicKeyRing.find} answers: the key, no such key (after a fetch), or the keys could not be had. */
export type KeyLookup = { readonly key: CryptoKey } | { readonly unknown: true } | { readonly unavailable: true };

/**
 * How GitHub's public keys are fetched: the global `fetch`, or a host's (a proxy, a test).
 *
 * @example
 * const viaProxy: FetchFunction = (url, init) => fetch(url, { ...init, dispatcher: proxyAgent } as RequestInit);
 */
export type FetchFunction = (input: string, init?: RequestInit) => Promise<Response>;

interface RingOptions {
  readonly url: string;
  readonly fetch: FetchFunction;
  readonly clock: () => number;
  readonly refetchIntervalMs: number;
  readonly timeoutMs: number;
}

// The PEM body of an SPKI public key, as bytes.
function pemBytes(pem: string): Uint8Array<ArrayBuffer> | null {
  const body = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----/.exec(pem)?.[1];
  if (!body) return null;
  try {
    const text = atob(body.replace(/\s+/g, ''));
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

// `{ public_keys: [{ key_identifier, key }] }` as a map from id to PEM; entries of another shape are skipped.
function keysOf(json: unknown): Map<string, string> | null {
  const list = (json as { public_keys?: unknown } | null)?.public_keys;
  if (!Array.isArray(list)) return null;
  const out = new Map<string, string>();
  for (const entry of list) {
    const { key_identifier: id, key } = (entry ?? {}) as { key_identifier?: unknown; key?: unknown };
    if (typeof id === 'string' && id !== '' && typeof key === 'string') out.set(id, key);
  }
  return out;
}

/**
 * The signing keys GitHub publishes, by key id: fetched on first use and again for an unknown key id,
 * no more than once per `refetchIntervalMs`; a key is imported (Web Crypto, ECDSA P-256) on first use.
 */
export class PublicKeyRing {
  private pems = new Map<string, string>();
  private readonly imported = new Map<string, Promise<CryptoKey | null>>();
  private fetchedAtMs = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | null = null;
  private loaded = false;

  constructor(private readonly options: RingOptions) {}

  /** The key with that id, fetching the list if it is not known and the interval allows. */
  async find(id: string): Promise<KeyLookup> {
    if (!this.pems.has(id)) {
      // A fetch under way (another request's) may bring it; otherwise fetch, if the interval allows.
      if (this.inFlight) await this.inFlight;
      else if (this.options.clock() - this.fetchedAtMs >= this.options.refetchIntervalMs) await this.refresh();
    }
    const pem = this.pems.get(id);
    if (pem === undefined) return this.loaded ? { unknown: true } : { unavailable: true };
    let key = this.imported.get(id);
    if (!key) {
      key = importP256(pem);
      this.imported.set(id, key);
    }
    const imported = await key;
    return imported ? { key: imported } : { unknown: true };
  }

  // One fetch at a time: concurrent requests with an unknown id wait for the same one.
  private refresh(): Promise<void> {
    this.inFlight ??= this.fetchKeys().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async fetchKeys(): Promise<void> {
    this.fetchedAtMs = this.options.clock();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    try {
      const response = await this.options.fetch(this.options.url, {
        headers: { accept: 'application/json' },
        signal: controller.signal,
      });
      if (!response.ok) return;
      const pems = keysOf(await response.json());
      if (!pems) return;
      // Keys GitHub no longer lists are dropped: a retired key verifies nothing more.
      for (const id of this.imported.keys()) if (pems.get(id) !== this.pems.get(id)) this.imported.delete(id);
      this.pems = pems;
      this.loaded = true;
    } catch {
      // Unreachable or not JSON: the keys known so far stay; the caller answers 503 if it needs a new one.
    } finally {
      clearTimeout(timer);
    }
  }
}

async function importP256(pem: string): Promise<CryptoKey | null> {
  const bytes = pemBytes(pem);
  if (!bytes) return null;
  try {
    return await crypto.subtle.importKey('spki', bytes, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
  } catch {
    return null;
  }
}
