import { type Context, Hono } from 'hono';
import { KeygateError } from 'keygate';
import { registerAssets } from './assets/routes.js';
import type { Dash, DashEnv } from './context.js';
import { gate } from './gate.js';
import { registerCreate } from './pages/create.js';
import { registerHistory } from './pages/history.js';
import { registerKey } from './pages/key.js';
import { registerList } from './pages/list.js';
import { keyNotFound, messagePage } from './pages/render.js';
import { registerRevoke } from './pages/revoke.js';
import { registerRotation } from './pages/rotation.js';
import { registerSignIn, registerSignOut } from './pages/sign-in.js';
import { registerWebhooks } from './pages/webhooks.js';
import { innerPath } from './paths.js';
import { applySecurityHeaders } from './security/headers.js';

/** The page for an error a route did not handle: what a person can do about it, never internals. */
function errorPage(err: unknown, c: Context<DashEnv>, dash: Dash) {
  const code = err instanceof KeygateError ? err.code : undefined;
  switch (code) {
    case 'key_not_found':
      return keyNotFound(c, dash);
    case 'key_revoked':
      return messagePage(
        c,
        dash,
        409,
        'Key revoked',
        'This key is revoked and can no longer be changed. Nothing was saved.',
      );
    case 'key_conflict':
    case 'key_in_use':
      return messagePage(c, dash, 409, 'Not done', `${(err as Error).message}. Nothing was changed.`);
    case 'key_store_unavailable':
      c.header('Retry-After', '5');
      return messagePage(
        c,
        dash,
        503,
        'Key store unavailable',
        'The key store is not answering. Try again in a moment.',
      );
    default:
      dash.onError(err);
      return messagePage(
        c,
        dash,
        500,
        'Something went wrong',
        'The dashboard could not finish this request. Try again.',
      );
  }
}

/**
 * The dashboard as a Hono app with routes relative to its mount path. `getPath` takes the mount path
 * off when the request still carries it, so the same app answers behind `ui.fetch` with full URLs and
 * behind hosts that strip the prefix.
 */
export function createApp(dash: Dash): Hono<DashEnv> {
  const app = new Hono<DashEnv>({ getPath: (request) => innerPath(dash.basePath, new URL(request.url).pathname) });
  app.use('*', async (c, next) => {
    await next();
    applySecurityHeaders(c.res.headers);
  });
  registerAssets(app);
  registerSignIn(app, dash);
  app.use('*', gate(dash));
  registerSignOut(app, dash);
  registerList(app, dash);
  registerHistory(app, dash);
  registerWebhooks(app, dash);
  registerCreate(app, dash);
  registerRevoke(app, dash);
  registerRotation(app, dash);
  registerKey(app, dash);
  app.notFound((c) => messagePage(c, dash, 404, 'Page not found', 'There is no page at this address.'));
  app.onError((err, c) => errorPage(err, c, dash));
  return app;
}
