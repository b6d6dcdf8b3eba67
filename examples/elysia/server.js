// keygate on Elysia (Bun): a health route before the plugin, the verify route after it.
// Run it with `bun examples/elysia/server.js` (after `npm run build`); it prints a test key once.
import { Elysia } from 'elysia';
import { CachedKeyStore, KeyManager, MemoryKeyStore } from 'keygate';
import { apiKeyAuth, socketAddress } from 'keygate/elysia';

/**
 * Builds the app (not listening yet) around a memory store holding one test key.
 *
 * @example
 * const { app, demo } = await build();
 * app.listen(3000);
 */
export async function build() {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const demo = await keys.create({ accountId: 'acct_demo', name: 'demo', mode: 'test', permissions: ['email:verify'] });

  const app = new Elysia()
    .get('/health', () => ({ up: true })) // registered before .use(): not guarded
    // The address of the connection Bun accepted; no proxy in front, so no header counts.
    .use(apiKeyAuth({ store: new CachedKeyStore(store), permissions: ['email:verify'], clientIp: socketAddress }))
    .post('/v1/email/verify', ({ body, apiKey }) => {
      const given = /** @type {{ email?: unknown } | null | undefined} */ (body);
      const email = typeof given?.email === 'string' ? given.email : '';
      return {
        email,
        result: /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) ? 'valid_syntax' : 'invalid_syntax',
        mode: apiKey.mode,
      };
    });
  return { app, demo };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { app, demo } = await build();
  app.listen({ port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (server) => {
    console.log(`keygate on Elysia at http://127.0.0.1:${server.port}; test key (shown once): ${demo.secret}`);
  });
}
