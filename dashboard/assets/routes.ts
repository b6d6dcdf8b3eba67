import type { Hono } from 'hono';
import type { DashEnv } from '../context.js';
import { FAVICON } from './favicon.js';
import { SCRIPT } from './script.js';
import { STYLE } from './style.js';

/** `GET /assets/dashboard.css`, `/assets/dashboard.js` and `/assets/favicon.svg`: served from the package, no session needed. */
export function registerAssets(app: Hono<DashEnv>): void {
  const serve = (body: string, type: string) => () =>
    new Response(body, { headers: { 'Content-Type': type, 'Cache-Control': 'public, max-age=3600' } });
  app.get('/assets/dashboard.css', serve(STYLE, 'text/css; charset=utf-8'));
  app.get('/assets/dashboard.js', serve(SCRIPT, 'text/javascript; charset=utf-8'));
  app.get('/assets/favicon.svg', serve(FAVICON, 'image/svg+xml'));
}
