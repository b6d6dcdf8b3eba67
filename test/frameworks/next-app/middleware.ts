// The app's gate. The test builds it as `middleware.ts` (Edge runtime, Next's default there) and, in a
// second build, renamed to `proxy.ts` (Next 16's name for it, always on the Node.js runtime).
import { type ApiKeyRecord, MemoryKeyStore } from 'keygate';
import { apiKeyMiddleware } from 'keygate/next';
import fixture from './keygate-fixture.json';

const store = new MemoryKeyStore();
const seeded = Promise.all((fixture.records as unknown as ApiKeyRecord[]).map((record) => store.insert(record)));

export default apiKeyMiddleware({
  store: { findByHash: (hash) => seeded.then(() => store.findByHash(hash)) },
  secret: fixture.secret,
  permissions: ['email:verify'],
  // A key is required under /api/v1; /api/health runs the middleware (so forged headers are removed) without one.
  paths: ['/api/v1'],
});

export const config = { matcher: '/api/:path*' };
