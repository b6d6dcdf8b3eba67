import type { Context } from 'hono';
import { html } from 'hono/html';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Dash, DashEnv } from '../context.js';
import { type Html, layout, type PageParts } from './layout.js';

/** Renders `parts` in the layout, with the signed-in account and CSRF token when there is one. */
export function render(
  c: Context<DashEnv>,
  dash: Dash,
  parts: Omit<PageParts, 'account' | 'csrf' | 'signOut'>,
  status: ContentfulStatusCode = 200,
) {
  const account = c.get('account');
  return c.html(
    layout(dash, { ...parts, account, csrf: c.get('csrf'), signOut: account !== undefined && !!c.get('session') }),
    status,
  );
}

/** A page that only says something: an `h1`, a paragraph, and a way on. */
export function messagePage(
  c: Context<DashEnv>,
  dash: Dash,
  status: ContentfulStatusCode,
  title: string,
  text: string,
  next: Html | string = html`<p><a href="${dash.path('/')}">Back to your API keys</a></p>`,
) {
  return render(c, dash, { title, body: html`<h1>${title}</h1><p>${text}</p>${next}` }, status);
}

/**
 * The answer for a key that is not the signed-in account's: the same bytes whether the key is
 * another account's or does not exist, so that ids of other accounts cannot be probed.
 */
export function keyNotFound(c: Context<DashEnv>, dash: Dash) {
  return messagePage(c, dash, 404, 'Key not found', 'There is no key with this id in your account.');
}

/** The error summary at the top of a refused form: a list of links to the fields. */
export function errorSummary(errors: Record<string, string | undefined>, labels: Record<string, string>) {
  const entries = Object.entries(errors).filter(([, message]) => message);
  if (entries.length === 0) return '';
  return html`<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1">
    <h2 id="error-summary-title">Nothing was saved. Please correct:</h2>
    <ul>${entries.map(([field, message]) => html`<li><a href="#${field}">${labels[field] ?? field}</a>: ${message}</li>`)}</ul>
  </div>`;
}
