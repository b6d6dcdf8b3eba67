import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Dash } from '../context.js';
import { ONCE_FIELD } from '../forms/once-token.js';
import { CSRF_FIELD } from '../security/csrf.js';

/** HTML as the `html` template returns it. */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** What a page hands to the layout. */
export interface PageParts {
  /** The document title's first part; the one `h1` is the page's own. */
  title: string;
  body: Html;
  /** Signed in: the account shown in the header, and the CSRF token of its forms. */
  account?: string;
  csrf?: string;
  /** Show "Sign out" (link sessions only; the host's login has its own). */
  signOut?: boolean;
}

/** The hidden CSRF field of a form. */
export function csrfField(token: string | undefined) {
  return token ? html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">` : '';
}

/** The hidden one-time token of a form that makes a key (create, rotate): a reload cannot send it twice. */
export function onceField(token: string) {
  return html`<input type="hidden" name="${ONCE_FIELD}" value="${token}">`;
}

/** The page around a route's content: header with the account and sign out, one `main` landmark. */
export function layout(dash: Dash, page: PageParts) {
  const header = page.account
    ? html`<div class="who"><span class="muted">Account</span> <strong>${page.account}</strong></div>
        ${
          page.signOut
            ? html`<form method="post" action="${dash.path('/sign-out')}" class="inline">${csrfField(page.csrf)}<button type="submit" class="link-button">Sign out</button></form>`
            : ''
        }`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${page.title} · keygate</title>
<link rel="icon" href="${dash.path('/assets/favicon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${dash.path('/assets/dashboard.css')}">
<script src="${dash.path('/assets/dashboard.js')}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="${dash.path('/')}">keygate</a>${header}</header>
<main id="main">
${page.body}
</main>
</body>
</html>`;
}
