import type { Signer } from './crypto.js';

/** Name of the hidden form field that carries the CSRF token. */
export const CSRF_FIELD = '_csrf';
/** Cookie that binds CSRF tokens when the account comes from the host's login (`resolveAccount`). */
export const CSRF_COOKIE = 'keygate_csrf';

const PURPOSE = 'csrf';

/**
 * The CSRF token of a binding (a session id, or the CSRF cookie's id plus the account): a MAC, so
 * it cannot be made without the secret and is worthless in another session.
 */
export function csrfToken(signer: Signer, binding: string): Promise<string> {
  return signer.sign(PURPOSE, binding);
}

/** Whether `token` is the CSRF token of `binding` (constant-time). */
export function verifyCsrfToken(signer: Signer, binding: string, token: unknown): Promise<boolean> {
  if (typeof token !== 'string' || token === '') return Promise.resolve(false);
  return signer.verify(PURPOSE, binding, token);
}

/**
 * Why a state-changing request is refused before its token is even read, or null when its headers
 * allow it: `Sec-Fetch-Site` present and neither `same-origin` nor `none`, or an `Origin` that names
 * another origin. `Origin: null`, which browsers send on the dashboard's own forms under
 * `Referrer-Policy: no-referrer`, is no reason to refuse: the CSRF token decides.
 */
export function crossOriginReason(headers: Headers, ownOrigin: string): string | null {
  const site = headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site: ${site}`;
  const origin = headers.get('origin');
  if (origin !== null && origin !== 'null' && origin !== ownOrigin) return 'Origin names another site';
  return null;
}

/**
 * Whether a navigation came from another site (`Sec-Fetch-Site: cross-site` or `same-site`). A
 * sign-in link followed from one is shown for confirmation instead of being redeemed at once, so that
 * a link someone else made cannot sign a browser in to their account unnoticed.
 */
export function fromAnotherSite(headers: Headers): boolean {
  const site = headers.get('sec-fetch-site');
  return site === 'cross-site' || site === 'same-site';
}
