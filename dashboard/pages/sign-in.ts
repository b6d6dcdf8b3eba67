import type { Context, Hono } from 'hono';
import { deleteCookie } from 'hono/cookie';
import { html } from 'hono/html';
import type { Dash, DashEnv } from '../context.js';
import { cookieOptions, currentSession, writeSession } from '../gate.js';
import { endedSessionId, newSession, SESSION_COOKIE } from '../security/session.js';
import { openSignInToken } from '../security/sign-in-token.js';
import { messagePage, render } from './render.js';

function signInPage(c: Context<DashEnv>, dash: Dash) {
  const signedOut = c.req.query('done') === 'signed-out';
  return render(c, dash, {
    title: 'Sign in',
    body: html`<h1>Sign in</h1>
    ${signedOut ? html`<p class="flash" role="status">You have signed out.</p>` : ''}
    <div class="card narrow">
      <p>The dashboard is opened with a one-time sign-in link. A link is valid for 15 minutes and works once.</p>
      <p>To get one, ask whoever runs this service, or run:</p>
      <pre><code>keygate dashboard link --account &lt;account id&gt;</code></pre>
    </div>`,
  });
}

async function redeem(c: Context<DashEnv>, dash: Dash, token: string) {
  const address = await dash.clientIp(c.req.raw, c.env?.rest ?? []);
  // An address the host cannot tell shares one bucket with every other such request: fail closed.
  const bucketAddress = address ?? 'unknown';
  const wait = await dash.throttle.check(bucketAddress);
  if (wait > 0) {
    c.header('Retry-After', String(wait));
    return messagePage(
      c,
      dash,
      429,
      'Too many attempts',
      'Too many sign-in links failed from your address. Try again later.',
      '',
    );
  }
  const now = dash.clock();
  const claims = await openSignInToken(dash.signer, token, now);
  // Recorded in the dashboard's store, so that the link works once across every process sharing it.
  const first = claims
    ? await dash.store.markTokenUsed(`sign-in:${claims.nonce}`, new Date(claims.expiresAt).toISOString())
    : false;
  if (!claims || !first) {
    await dash.throttle.fail(bucketAddress);
    return messagePage(
      c,
      dash,
      401,
      'Sign-in link not valid',
      'This sign-in link is not valid: it may have expired (links last 15 minutes) or been used already. Ask for a new one.',
      '',
    );
  }
  await writeSession(c, dash, newSession(claims.accountId, now));
  return c.redirect(dash.path('/'), 303);
}

/** `GET /sign-in`: redeems `?token=` (a one-time link), or explains how to get one. */
export function registerSignIn(app: Hono<DashEnv>, dash: Dash): void {
  app.get('/sign-in', async (c) => {
    const token = c.req.query('token');
    if (token !== undefined) return redeem(c, dash, token);
    if (await currentSession(c, dash)) return c.redirect(dash.path('/'), 303);
    return signInPage(c, dash);
  });
}

/** `POST /sign-out`: ends the session everywhere (recorded in the store), then clears the cookie. */
export function registerSignOut(app: Hono<DashEnv>, dash: Dash): void {
  app.post('/sign-out', async (c) => {
    const session = c.get('session');
    if (session) {
      await dash.store.markTokenUsed(
        endedSessionId(session),
        new Date(session.issuedAt + dash.times.absoluteMs).toISOString(),
      );
      const { path, secure, httpOnly, sameSite } = cookieOptions(c, dash, 0);
      deleteCookie(c, SESSION_COOKIE, { path, secure, httpOnly, sameSite });
      return c.redirect(dash.path('/sign-in?done=signed-out'), 303);
    }
    return c.redirect(dash.path('/'), 303);
  });
}
