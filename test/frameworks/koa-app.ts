// The shared routes on Koa 3 (`koa`) or Koa 2 (`koa2`, an npm alias): one guard per route path.
import type { KeyStore } from 'keygate';
import { apiKeyAuth } from 'keygate/koa';
import type Koa from 'koa';
import { routeOptions } from './apps.js';

/** A Koa constructor of either major (Koa 2 has no types of its own here). */
export type KoaClass = typeof Koa;

/** The shared routes; `proxy` is Koa's `app.proxy` (trust `X-Forwarded-For`), on as the other apps trust 127.0.0.1. */
export function createKoaApp(KoaApp: KoaClass, store: KeyStore, proxy = true): Koa {
  const app = new KoaApp();
  app.proxy = proxy;
  const guards = new Map(Object.entries(routeOptions(store)).map(([path, options]) => [path, apiKeyAuth(options)]));
  app.use((ctx, next) => {
    const guard = guards.get(ctx.path);
    if (!guard) return next();
    return guard(ctx as never, async () => {
      ctx.body = { keyId: ctx.state.apiKey.id };
    });
  });
  return app;
}
