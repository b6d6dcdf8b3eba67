// keygate on Koa: a health route before the middleware, the verify route after it.
// Run it with `node examples/koa/server.js` (after `npm run build`); it prints a test key once.

import { CachedKeyStore, KeyManager, MemoryKeyStore } from 'keygate';
import { apiKeyAuth } from 'keygate/koa';
import Koa from 'koa';

/**
 * Builds the app (not listening yet) around a memory store holding one test key.
 *
 * @returns {Promise<{ app: Koa, demo: import('keygate').CreatedKey }>}
 * @example
 * const { app, demo } = await build();
 * app.listen(3000);
 */
export async function build() {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const demo = await keys.create({ accountId: 'acct_demo', name: 'demo', mode: 'test', permissions: ['email:verify'] });

  const app = new Koa();
  // No proxy in front: X-Forwarded-For must not count, and `app.proxy` is false by default. Behind
  // one, set `app.proxy = true` (and `app.maxIpsCount` to the number of proxies).
  app.use(async (ctx, next) => {
    if (ctx.path !== '/health') return next();
    ctx.body = { up: true }; // answered before the key is checked
  });
  app.use(apiKeyAuth({ store: new CachedKeyStore(store), permissions: ['email:verify'] }));
  app.use((ctx) => {
    if (ctx.method !== 'GET' || ctx.path !== '/v1/email/verify') return; // Koa answers 404
    const email = typeof ctx.query.email === 'string' ? ctx.query.email : '';
    /** @type {import('keygate').PublicKey} */
    const key = ctx.state.apiKey;
    ctx.body = {
      email,
      result: /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) ? 'valid_syntax' : 'invalid_syntax',
      mode: key.mode,
    };
  });
  return { app, demo };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { app, demo } = await build();
  const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
    console.log(`keygate on Koa at http://127.0.0.1:${port}; test key (shown once): ${demo.secret}`);
  });
}
