import { allowListOf, type CompiledKey, compileKey, expiresAtMsOf } from '../key/compiled-key.js';
import { isWellFormedKey } from '../key/format.js';
import { digestKey } from '../key/hash.js';
import type { ApiKeyRecord, KeyStore, PublicKey } from '../types.js';
import { CAPABILITIES, type Capable, capabilityOf } from '../vocabulary/capabilities.js';
import { DENIALS, type DenialCode } from '../vocabulary/denials.js';
import type { AuthFailure, AuthRequest, AuthResult } from '../vocabulary/result.js';
import type { ResolvedOptions } from './options.js';
import { readHeader } from './read-header.js';
import { readKey } from './read-key.js';

// The checks of the contract, in order. Synchronous until the store has to be asked (a cache miss, or
// a Web Crypto digest), so that a cached key is judged without a single await.

/** Denials that carry no key: the same object every time, nothing to allocate on a flood. */
export const BARE: { readonly [C in DenialCode]: AuthFailure } = Object.fromEntries(
  Object.entries(DENIALS).map(([code, d]) => [
    code,
    Object.freeze({ ok: false, status: d.status, code, message: d.detail }),
  ]),
) as never;

// A result that carries the key: built once per compiled record and kept in `memo` (frozen, shared by
// its requests); for a view a cache holds (no compiled form, to keep a key small), per request.
function withKey(view: PublicKey, memo: CompiledKey | undefined, code: DenialCode | 'ok' = 'ok'): AuthResult {
  let result = memo?.results[code];
  if (result === undefined) {
    const d = DENIALS[code as DenialCode] as (typeof DENIALS)[DenialCode] | undefined; // none for 'ok'
    result = (
      d ? { ok: false, status: d.status, code, message: d.detail, key: view } : { ok: true, status: 200, key: view }
    ) as AuthResult;
    // Frozen when shared; one built for a single request is nobody else's (and freezing costs as much as building).
    if (memo) memo.results[code] = Object.freeze(result);
  }
  return result;
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

// The checks after the lookup (rows 4 to 8, a suspension between 6 and 7), synchronous. A record that
// is not the one asked for, or cannot be compiled, is a store fault: fail closed.
function judge(request: AuthRequest, o: ResolvedOptions, hash: string, record: unknown): AuthResult {
  if (record == null) return BARE.invalid_api_key;
  let key: CompiledKey;
  try {
    if (typeof record !== 'object' || (record as ApiKeyRecord).hash !== hash) return BARE.key_store_unavailable;
    key = compileKey(record as ApiKeyRecord);
    // An expiry that is not a date would read as "never expires": garbage, so fail closed.
    if (Number.isNaN(expiresAtMsOf(key.view))) return BARE.key_store_unavailable;
  } catch {
    return BARE.key_store_unavailable;
  }
  return verdict(request, o, key.view, key);
}

// Rows 5 to 8 on a key's view (its expiry and compiled allow list are kept by view and by list).
// `memo`, a compiled record's, keeps the results it builds.
function verdict(request: AuthRequest, o: ResolvedOptions, view: PublicKey, memo?: CompiledKey): AuthResult {
  const status = view.status;
  const expiresAtMs = expiresAtMsOf(view);
  // Any status but these two (a custom store's garbage) counts as revoked: fail closed.
  if (status !== 'active' && status !== 'suspended') return withKey(view, memo, 'revoked_api_key');
  if (expiresAtMs !== Infinity && o.clock() >= expiresAtMs) {
    return withKey(view, memo, 'expired_api_key');
  }
  if (status === 'suspended') return withKey(view, memo, 'key_suspended');
  if (!allowListOf(view.allowedIps).allows(request.ip)) return withKey(view, memo, 'ip_not_allowed');
  const required = o.permissions;
  for (let i = 0; i < required.length; i++) {
    if (!view.permissions.includes(required[i] as string)) return withKey(view, memo, 'insufficient_permissions');
  }
  return withKey(view, memo);
}

// The view a store holds for `hash` (CachedKeyStore's `views` capability), counted as a cache hit unless `hit` is false.
const viewIn = (store: KeyStore, hash: string, hit?: boolean): PublicKey | undefined =>
  (store as Partial<Capable>)[CAPABILITIES]?.views?.peekView(hash, hit);

function peeked(request: AuthRequest, store: KeyStore, o: ResolvedOptions, hash: string): AuthResult | string {
  let cached: ApiKeyRecord | null | undefined;
  try {
    const view = viewIn(store, hash);
    // A view is cached only with an expiry that is a date (see compact-record.ts).
    if (view) return verdict(request, o, view);
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
  // A store that fails, or a record that cannot be judged (an allow list that does not compile), is 503.
  return load(store, hash, o.timeoutMs)
    .then((record) => {
      // What a cache kept of the answer, judged as a cached key is: the record needs no compiling.
      const view = record && viewIn(store, hash, false);
      return view ? verdict(request, o, view) : judge(request, o, hash, record);
    })
    .catch(() => BARE.key_store_unavailable);
}

/** Every check in order, without throttling: the result itself when no I/O was needed, else a Promise. */
export function decide(request: AuthRequest, store: KeyStore, o: ResolvedOptions): AuthResult | Promise<AuthResult> {
  const s = screen(request, store, o);
  if (typeof s === 'string') return lookUp(request, store, o, s);
  if ('then' in s) return s.then((x) => (typeof x === 'string' ? lookUp(request, store, o, x) : x));
  return s;
}
