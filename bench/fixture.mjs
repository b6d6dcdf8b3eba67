// One key, one store, the same everywhere in the benchmark: what a user's `CachedKeyStore` holds.
import { CachedKeyStore, hashKey, keyHint, MemoryKeyStore } from 'keygate';

/** Address every benchmark request comes from (loopback). */
export const CLIENT_IP = '127.0.0.1';
/** Permission the benchmarked route requires. */
export const PERMISSION = 'email:verify';
/** The route every server variant answers, and its body. */
export const ROUTE = '/v1/ping';
export const BODY = JSON.stringify({ ok: true, service: 'email-verification' });
/** The POST route every server variant answers: it parses a small JSON body, as an e-mail API does. */
export const POST_ROUTE = '/v1/email/verify';
/** The JSON body every POST carries. */
export const POST_BODY = JSON.stringify({ email: 'a@b.example' });

/**
 * A record for `secret` with the given allow list, inserted into a fresh MemoryKeyStore behind a
 * CachedKeyStore; the cache is warmed so that the request path is the cached one.
 */
export async function keyStoreWith(secret, allowedIps = [CLIENT_IP]) {
  const now = new Date().toISOString();
  const memory = new MemoryKeyStore();
  await memory.insert({
    id: 'key_bench',
    hash: await hashKey(secret),
    accountId: 'acct_bench',
    name: 'bench',
    mode: 'live',
    status: 'active',
    permissions: [PERMISSION],
    allowedIps,
    hint: keyHint(secret),
    createdAt: now,
    updatedAt: now,
    expiresAt: null,
    revokedAt: null,
    rotatedFrom: null,
    rotatedTo: null,
    metadata: {},
    version: 1,
  });
  const store = new CachedKeyStore(memory, { ttlMs: 3_600_000 });
  await store.findByHash(await hashKey(secret));
  return store;
}

/** `count` distinct IPv4 /32 entries that never contain 127.0.0.1 or 10.x, plus `extra`. */
export function manyIpv4(count, extra = []) {
  const out = [];
  for (let i = 0; out.length < count - extra.length; i++) {
    out.push(`192.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  }
  return [...out, ...extra];
}

/** `count` distinct IPv6 /64 entries in 2001:db8::/32, plus `extra`. */
export function manyIpv6(count, extra = []) {
  const out = [];
  for (let i = 0; out.length < count - extra.length; i++) {
    out.push(`2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64`);
  }
  return [...out, ...extra];
}
