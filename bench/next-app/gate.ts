// The bench app's middleware, copied in as `middleware.ts` (Edge) or `proxy.ts` (Node.js) by
// bench/next.mjs. BENCH_GATE chooses at start-up: `noop` lets every request through, `keygate` is
// apiKeyMiddleware over a warm CachedKeyStore holding the one bench key (BENCH_KEY).
import { CachedKeyStore, hashKey, keyHint, MemoryKeyStore } from 'keygate';
import { apiKeyMiddleware } from 'keygate/next';
import { NextResponse } from 'next/server';

const memory = new MemoryKeyStore();
const store = new CachedKeyStore(memory, { ttlMs: 3_600_000 });
const secret = process.env.BENCH_KEY ?? '';
const now = new Date().toISOString();
const seeded = hashKey(secret).then((hash) =>
  memory.insert({
    id: 'key_bench',
    hash,
    accountId: 'acct_bench',
    name: 'bench',
    mode: 'live',
    status: 'active',
    permissions: ['email:verify'],
    allowedIps: [],
    hint: keyHint(secret),
    createdAt: now,
    updatedAt: now,
    expiresAt: null,
    revokedAt: null,
    rotatedFrom: null,
    rotatedTo: null,
    metadata: {},
    version: 1,
  }),
);

const keygate =
  process.env.BENCH_GATE === 'keygate'
    ? apiKeyMiddleware({
        store: { findByHash: (hash) => seeded.then(() => store.findByHash(hash)) },
        secret: process.env.BENCH_SIGNING_SECRET ?? '',
        permissions: ['email:verify'],
      })
    : undefined;

export default function gate(request: Parameters<NonNullable<typeof keygate>>[0]) {
  return keygate ? keygate(request) : NextResponse.next();
}

export const config = { matcher: '/v1/:path*' };
