import { capabilityOf } from '../capabilities.js';
import { isWellFormedKey } from '../key/format.js';
import { digestKey } from '../key/hash.js';
import type { ApiKeyRecord, KeyStore } from '../types.js';
import { type CompiledKey, compileKey } from './compiled-key.js';
import { DENIALS, type DenialCode } from './denials.js';
import type { ResolvedOptions } from './options.js';
import { readHeader } from './read-header.js';
import { readKey } from './read-key.js';
import type { AuthFailure, AuthRequest, AuthResult } from './result.js';

// The checks of the contract, in order. Synchronous until the store has to be asked (a cache miss, or
// a Web Crypto digest), so that a cached key is judged without a single await.

/** Denials that carry no key: the same object every time, nothing to allocate on a flood. */
export const BARE: { readonly [C in DenialCode]: AuthFailure } = Object.fromEntries(
  Object.entries(DENIALS).map(([code, d]) => [
    code,
    Object.freeze({ ok: false, status: d.status, code, message: d.detail }),
  ]),
) as never;

// Results that carry a key are built once per compiled record and reused: the cached path allocates nothing.
function allowed(key: CompiledKey): AuthResult {
  key.allowed ??= Object.freeze({ ok: true, status: 200, key: key.view });
  return key.allowed;
}

function denied(key: CompiledKey, code: DenialCode): AuthResult {
  const d = DENIALS[code];
  key.denied ??= {};
  const built = key.denied;
  built[code] ??= Object.freeze({ ok: false, status: d.status, code, message: d.detail, key: key.view });
  return built[code];
}

function timeoutAfter(ms: number): { promise: Promise<never>; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`key store did not answer within ${ms} ms`)), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

// A store that declares a `deadline` no later than the auth timeout (CachedKeyStore does) needs no
// second timer, the rule `guardFor` applies to limiters; any other is guarded by the auth timeout.
function guarded(store: KeyStore, timeoutMs: number): boolean {
  if (timeoutMs === 0) return false;
  const own = capabilityOf(store, 'deadline')?.timeoutMs;
  return !(typeof own === 'number' && own > 0 && own <= timeoutMs);
}

async function load(store: KeyStore, hash: string, timeoutMs: number): Promise<ApiKeyRecord | null | undefined> {
  if (!guarded(store, timeoutMs)) return store.findByHash(hash);
  const t = timeoutAfter(timeoutMs);
  try {
    return await Promise.race([store.findByHash(hash), t.promise]);
  } finally {
    t.cancel();
  }
}

// The compiled record, or null when the store answered with something that is not the record asked
// for or cannot be compiled: a store fault, so the caller fails closed.
function compiledOrNull(hash: string, record: unknown): CompiledKey | null {
  try {
    if (typeof record !== 'object' || (record as ApiKeyRecord).hash !== hash) return null;
    const key = compileKey(record as ApiKeyRecord);
    // An expiry that is not a date would read as "never expires": garbage, so fail closed.
    return Number.isNaN(key.expiresAtMs) ? null : key;
  } catch {
    return null;
  }
}

// The checks after the lookup (rows 4 to 8, a suspension between 6 and 7), synchronous.
function judge(request: AuthRequest, o: ResolvedOptions, hash: string, record: unknown): AuthResult {
  if (record == null) return BARE.invalid_api_key;
  const key = compiledOrNull(hash, record);
  if (key === null) return BARE.key_store_unavailable;
  if (key.revoked) return denied(key, 'revoked_api_key');
  if (key.expiresAtMs !== Number.POSITIVE_INFINITY && o.clock() >= key.expiresAtMs) {
    return denied(key, 'expired_api_key');
  }
  if (key.suspended) return denied(key, 'key_suspended');
  if (!key.allowList.allows(request.ip)) return denied(key, 'ip_not_allowed');
  const required = o.permissions;
  for (let i = 0; i < required.length; i++) {
    if (!key.permissions.includes(required[i] as string)) return denied(key, 'insufficient_permissions');
  }
  return allowed(key);
}

function peeked(request: AuthRequest, store: KeyStore, o: ResolvedOptions, hash: string): AuthResult | string {
  let cached: ApiKeyRecord | null | undefined;
  try {
    cached = store.peek?.(hash);
  } catch {
    return BARE.key_store_unavailable;
  }
  return cached === undefined ? hash : judge(request, o, hash, cached);
}

/**
 * Everything that needs no store I/O: the header, the format, the digest and the store's synchronous
 * `peek`. Returns the result when that decides it, or the digest (a string) when the store must be asked.
 */
export function screen(
  request: AuthRequest,
  store: KeyStore,
  o: ResolvedOptions,
): AuthResult | string | Promise<AuthResult | string> {
  // The default reads one header, as it always did; Bearer costs only those who ask for it.
  const raw = o.from === 'header' ? readHeader(request.headers, o.header) : readKey(request.headers, o.header, o.from);
  if (raw === undefined) return BARE.missing_api_key;
  if (raw === null || !isWellFormedKey(raw, o.prefix)) return BARE.malformed_api_key;
  let digest: string | Promise<string>;
  try {
    digest = digestKey(raw, o.pepper);
  } catch {
    return BARE.key_store_unavailable;
  }
  return typeof digest === 'string'
    ? peeked(request, store, o, digest)
    : digest.then(
        (hash) => peeked(request, store, o, hash),
        () => BARE.key_store_unavailable,
      );
}

/** Asks the store for `hash` (within the timeout) and judges its answer; a failure or timeout is 503. */
export function lookUp(request: AuthRequest, store: KeyStore, o: ResolvedOptions, hash: string): Promise<AuthResult> {
  return load(store, hash, o.timeoutMs).then(
    (record) => judge(request, o, hash, record),
    () => BARE.key_store_unavailable,
  );
}

/** Every check in order, without throttling: the result itself when no I/O was needed, else a Promise. */
export function decide(request: AuthRequest, store: KeyStore, o: ResolvedOptions): AuthResult | Promise<AuthResult> {
  const s = screen(request, store, o);
  if (typeof s === 'string') return lookUp(request, store, o, s);
  if ('then' in s) return s.then((x) => (typeof x === 'string' ? lookUp(request, store, o, x) : x));
  return s;
}
