import type { Context, Hono } from 'hono';
import { deleteCookie } from 'hono/cookie';
import { html } from 'hono/html';
import type { Dash, DashEnv } from '../context.js';
import { cookieOptions, currentSession } from '../gate.js';
import { fromAnotherSite } from '../security/csrf.js';
import { endedSessionId, SESSION_COOKIE } from '../security/session.js';
import { render } from './render.js';
import { confirmLink, redeem, redeemConfirmed } from './sign-in-link.js';

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

/**
 * `GET /sign-in`: redeems `?token=` (a one-time link), or explains how to get one; `POST /sign-in`:
 * redeems a link from its confirmation page. A link is redeemed at once only when it can replace
 * nothing and was opened by this browser itself (typed, pasted or opened from another program:
 * `Sec-Fetch-Site: none`, `same-origin` or absent). Followed from another site, over an existing
 * session, or asked for with HEAD, it is shown for confirmation first and consumed only by the POST.
 */
export function registerSignIn(app: Hono<DashEnv>, dash: Dash): void {
  app.get('/sign-in', async (c) => {
    const token = c.req.query('token');
    const current = await currentSession(c, dash);
    if (token === undefined) return current ? c.redirect(dash.path('/'), 303) : signInPage(c, dash);
    if (current || c.req.method === 'HEAD' || fromAnotherSite(c.req.raw.headers)) {
      return confirmLink(c, dash, token, current);
    }
    return redeem(c, dash, token);
  });
  app.post('/sign-in', (c) => redeemConfirmed(c, dash));
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
