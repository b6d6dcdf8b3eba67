import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { Dash, DashEnv } from './context.js';
import { readForm } from './forms/read-body.js';
import { messagePage } from './pages/render.js';
import { randomId } from './security/crypto.js';
import { CSRF_COOKIE, CSRF_FIELD, crossOriginReason, csrfToken, verifyCsrfToken } from './security/csrf.js';
import {
  endedSessionId,
  openSession,
  SESSION_COOKIE,
  SESSION_REFRESH_MS,
  type Session,
  sealSession,
} from './security/session.js';
import { validAccountId } from './security/sign-in-token.js';

/** Cookie attributes of the dashboard: HttpOnly, SameSite=Lax, Path=<basePath>, Secure over https. */
export function cookieOptions(c: Context<DashEnv>, dash: Dash, maxAgeMs: number) {
  return {
    path: dash.basePath,
    httpOnly: true,
    sameSite: 'Lax' as const,
    secure: new URL(c.req.url).protocol === 'https:',
    maxAge: Math.max(1, Math.floor(maxAgeMs / 1000)),
  };
}

/** Writes the session cookie. */
export async function writeSession(c: Context<DashEnv>, dash: Dash, session: Session): Promise<void> {
  const left = session.issuedAt + dash.times.absoluteMs - dash.clock();
  setCookie(c, SESSION_COOKIE, await sealSession(dash.signer, session), cookieOptions(c, dash, left));
}

/** The session in the request's cookie: signed, within its idle and absolute times, and not signed out. */
export async function currentSession(c: Context<DashEnv>, dash: Dash): Promise<Session | null> {
  const session = await openSession(dash.signer, getCookie(c, SESSION_COOKIE), dash.clock(), dash.times);
  if (!session) return null;
  return (await dash.store.isTokenUsed(endedSessionId(session))) ? null : session;
}

/**
 * The random id of this browser in the CSRF cookie, which binds CSRF tokens where there is no link
 * session (the host's login, the sign-in confirmation). A page (`create`) sets one when there is none;
 * a form post (`create` false) without one gets null.
 */
export function browserId(c: Context<DashEnv>, dash: Dash, create: boolean): string | null {
  const id = getCookie(c, CSRF_COOKIE);
  if (id && /^[A-Za-z0-9_-]{16,64}$/.test(id)) return id;
  if (!create) return null;
  const fresh = randomId(18);
  setCookie(c, CSRF_COOKIE, fresh, cookieOptions(c, dash, dash.times.absoluteMs));
  return fresh;
}

/** The account the host's login names, checked like any account id; null when it names none. */
async function hostAccount(c: Context<DashEnv>, dash: Dash): Promise<string | null> {
  if (!dash.resolveAccount) return null;
  const account = await dash.resolveAccount(c.req.raw);
  return account === null || account === undefined || account === '' ? null : validAccountId(account);
}

/**
 * Who is asking, and whether a state-changing request is really theirs. Sets `account`, `session`
 * and `csrf`; for a POST also `form`, after the Origin, Sec-Fetch-Site and CSRF token checks.
 * Not signed in: a GET is sent (303) to the sign-in page, anything else gets 401.
 */
export function gate(dash: Dash): MiddlewareHandler<DashEnv> {
  return async function dashboardGate(c, next) {
    const method = c.req.method;
    const reading = method === 'GET' || method === 'HEAD';
    const account = await hostAccount(c, dash);
    let binding: string;
    if (account !== null) {
      // The host's login: CSRF tokens are bound to a random cookie of this browser and the account.
      const id = browserId(c, dash, reading);
      if (id === null)
        return messagePage(c, dash, 403, 'Request refused', 'This form has expired. Reload the page and try again.');
      binding = `host\n${id}\n${account}`;
      c.set('account', account);
      c.set('session', null);
    } else {
      const session = await currentSession(c, dash);
      if (!session) {
        if (reading) return c.redirect(dash.path('/sign-in'), 303);
        return messagePage(c, dash, 401, 'Signed out', 'Your session has ended. Sign in again with a new link.');
      }
      const now = dash.clock();
      if (now - session.seenAt >= SESSION_REFRESH_MS) await writeSession(c, dash, { ...session, seenAt: now });
      binding = `session\n${session.id}`;
      c.set('account', session.accountId);
      c.set('session', session);
    }
    c.set('csrf', await csrfToken(dash.signer, binding));
    if (!reading) {
      const refused = await refusal(c, dash, binding);
      if (refused) return refused;
    }
    await next();
  };
}

/** The 403 for a state-changing request that is not provably the dashboard's own form, or null. */
async function refusal(c: Context<DashEnv>, dash: Dash, binding: string): Promise<Response | null> {
  const refuse = () =>
    messagePage(
      c,
      dash,
      403,
      'Request refused',
      'This request did not come from a dashboard form. Nothing was changed.',
    );
  if (c.req.method !== 'POST') return refuse();
  if (crossOriginReason(c.req.raw.headers, new URL(c.req.url).origin)) return refuse();
  const form = await readForm(c.req.raw);
  if (!form || !(await verifyCsrfToken(dash.signer, binding, form.get(CSRF_FIELD)))) return refuse();
  c.set('form', form);
  return null;
}
