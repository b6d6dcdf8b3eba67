// keygate in Next.js middleware: requests under /v1 need a key with `email:verify`. The demo key comes
// from the environment (KEYGATE_DEMO_KEY); a real deployment backs keygate with a store every instance
// shares (on the Node.js runtime, `proxy.ts` in Next.js 16: PostgreSQL, Redis, ...).
import { KeyManager, MemoryKeyStore } from 'keygate';
import { apiKeyMiddleware } from 'keygate/next';

const store = new MemoryKeyStore();
const keys = new KeyManager({ store });
let seeded: Promise<unknown> | undefined;

// Imported on first use: import() checks the key's format and checksum and keeps only its digest and hint.
function seed(): Promise<unknown> {
  seeded ??= keys.import({
    accountId: 'acct_demo',
    name: 'demo',
    permissions: ['email:verify'],
    secret: process.env.KEYGATE_DEMO_KEY ?? '',
  });
  return seeded;
}

export default apiKeyMiddleware({
  store: { findByHash: (hash) => seed().then(() => store.findByHash(hash)) },
  // Signs the key's view for the route handlers; they read it with the same secret.
  secret: process.env.KEYGATE_NEXT_SECRET ?? '',
  permissions: ['email:verify'],
});

// Next runs the middleware on these paths only; everything else is public.
export const config = { matcher: '/v1/:path*' };
