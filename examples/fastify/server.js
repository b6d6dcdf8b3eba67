// keygate on Fastify: one plugin registration, a route that narrows permissions, one that opts out.
// Run it with `node examples/fastify/server.js` (after `npm run build`); it prints a test key once.
import Fastify from 'fastify';
import { CachedKeyStore, KeyManager, MemoryKeyStore } from 'keygate';
import { apiKeyAuth } from 'keygate/fastify';

/**
 * Builds the app (not listening yet) around a memory store holding one test key.
 *
 * @returns {Promise<{ app: import('fastify').FastifyInstance, demo: import('keygate').CreatedKey }>}
 * @example
 * const { app, demo } = await build();
 * await app.inject({ method: 'POST', url: '/v1/email/verify', headers: { 'x-api-key': demo.secret } });
 */
export async function build() {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const demo = await keys.create({ accountId: 'acct_demo', name: 'demo', mode: 'test', permissions: ['email:verify'] });

  // No proxy in front: X-Forwarded-For must not count. Behind one, name it: trustProxy: '10.0.0.2'.
  const app = Fastify({ trustProxy: false });
  await app.register(apiKeyAuth, { store: new CachedKeyStore(store) });
  app.post('/v1/email/verify', { config: { apiKey: { permissions: ['email:verify'] } } }, async (request) => {
    const body = /** @type {{ email?: unknown } | null | undefined} */ (request.body);
    const email = typeof body?.email === 'string' ? body.email : '';
    // Set on every route that did not opt out (it is null only on those).
    const key = /** @type {import('keygate').PublicKey} */ (request.apiKey);
    return {
      email,
      result: /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) ? 'valid_syntax' : 'invalid_syntax',
      mode: key.mode,
    };
  });
  app.get('/v1/status', { config: { apiKey: false } }, async () => ({ up: true })); // opts out
  return { app, demo };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { app, demo } = await build();
  const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
  console.log(`keygate on Fastify at ${address}; test key (shown once): ${demo.secret}`);
}
