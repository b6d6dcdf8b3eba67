import type { Context } from 'hono';
import { html } from 'hono/html';
import { retryAfterSeconds } from 'keygate/adapter-kit';
import { recordSignIn } from '../audit-context.js';
import type { Dash, DashEnv } from '../context.js';
import { readForm } from '../forms/read-body.js';
import { browserId, writeSession } from '../gate.js';
import { CSRF_FIELD, crossOriginReason, csrfToken, verifyCsrfToken } from '../security/csrf.js';
import { newSession, type Session } from '../security/session.js';
import { openSignInToken, type SignInClaims } from '../security/sign-in-token.js';
import { csrfField } from './layout.js';
import { messagePage, render } from './render.js';

/** Name of the confirmation form's field that carries the sign-in token (in the body, never a URL). */
export const TOKEN_FIELD = 'token';

/** The id under which a redeemed link is recorded. */
const usedId = (claims: SignInClaims) => `sign-in:${claims.nonce}`;

/** What a confirmation form's CSRF token is bound to: this browser's cookie id and the link's token. */
const confirmBinding = (browser: string, token: string) => `sign-in\n${browser}\n${token}`;

/**
 * The answer to a link that does not sign in (made up, altered, expired or used), the same whichever
 * it is: 429 with `Retry-After` (whole seconds) while the address is held back, else 401 and the
 * failure counted. Valid links never come here, so a throttled address still signs in with one.
 */
async function refuseLink(c: Context<DashEnv>, dash: Dash) {
  const address = await dash.clientIp(c.req.raw, c.env?.rest ?? []);
  // An address the host cannot tell shares one bucket with every other such request: fail closed.
  const bucketAddress = address ?? 'unknown';
  const waitMs = await dash.throttle.check(bucketAddress);
  const newLink = html`<p>To get a new link, ask whoever runs this service, or run:</p>
    <pre><code>keygate dashboard link --account &lt;account id&gt;</code></pre>`;
  if (waitMs > 0) {
    c.header('Retry-After', String(retryAfterSeconds(waitMs)));
    return messagePage(
      c,
      dash,
      429,
      'Too many attempts',
      'Too many sign-in links failed from your address. Try again later.',
      newLink,
    );
  }
  await dash.throttle.fail(bucketAddress);
  return messagePage(
    c,
    dash,
    401,
    'Sign-in link not valid',
    'This sign-in link is not valid: it may have expired (links last 15 minutes) or been used already.',
    newLink,
  );
}

/**
 * Redeems `token`: recorded as used where the keys live (so it works once across every process
 * sharing the store), then a session cookie and 303 to the key list. Anything else: {@link refuseLink}.
 */
export async function redeem(c: Context<DashEnv>, dash: Dash, token: string) {
  const now = dash.clock();
  const claims = await openSignInToken(dash.signer, token, now);
  const first = claims
    ? await dash.store.markTokenUsed(usedId(claims), new Date(claims.expiresAt).toISOString())
    : false;
  if (!claims || !first) return refuseLink(c, dash);
  await writeSession(c, dash, newSession(claims.accountId, now));
  await recordSignIn(c, dash, claims.accountId);
  return c.redirect(dash.path('/'), 303);
}

/**
 * The confirmation of a link that would replace a session or was followed from another site: the
 * account it signs in to, and a button that posts the token back (with a CSRF token bound to this
 * browser). Nothing is consumed here; a link that would not sign in is refused as on redemption.
 */
export async function confirmLink(c: Context<DashEnv>, dash: Dash, token: string, current: Session | null) {
  const claims = await openSignInToken(dash.signer, token, dash.clock());
  if (!claims || (await dash.store.isTokenUsed(usedId(claims)))) return refuseLink(c, dash);
  const browser = browserId(c, dash, true) as string;
  const csrf = await csrfToken(dash.signer, confirmBinding(browser, token));
  return render(c, dash, {
    title: 'Confirm sign-in',
    body: html`<h1>Confirm sign-in</h1>
    <div class="card narrow">
      <p>This link signs you in to the account <strong>${claims.accountId}</strong>.</p>
      ${current ? html`<p>You are signed in to <strong>${current.accountId}</strong>; signing in here replaces that session in this browser.</p>` : ''}
      <p>Continue only if you asked for this link yourself: keys you create and addresses you allow from now on belong to the account above.</p>
      <form method="post" action="${dash.path('/sign-in')}">
        ${csrfField(csrf)}<input type="hidden" name="${TOKEN_FIELD}" value="${token}">
        <div class="actions"><button type="submit" class="button">Sign in</button> <a href="${dash.path('/')}">Cancel</a></div>
      </form>
    </div>`,
  });
}

/**
 * `POST /sign-in` from the confirmation page: refused (403, nothing consumed) unless it comes from
 * the dashboard's own origin (`Origin`, `Sec-Fetch-Site`, as for every dashboard form) with the
 * CSRF token the page gave this browser; then the link is redeemed.
 */
export async function redeemConfirmed(c: Context<DashEnv>, dash: Dash) {
  const sameOrigin = !crossOriginReason(c.req.raw.headers, new URL(c.req.url).origin);
  const form = sameOrigin ? await readForm(c.req.raw) : null;
  const token = form?.get(TOKEN_FIELD);
  const browser = browserId(c, dash, false);
  const proven =
    form && token && browser !== null
      ? await verifyCsrfToken(dash.signer, confirmBinding(browser, token), form.get(CSRF_FIELD))
      : false;
  if (!proven || !token) {
    return messagePage(
      c,
      dash,
      403,
      'Request refused',
      'This request did not come from a dashboard form. Nothing was changed.',
    );
  }
  return redeem(c, dash, token);
}
