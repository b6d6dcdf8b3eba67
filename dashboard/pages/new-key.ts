import type { Context } from 'hono';
import { html } from 'hono/html';
import type { ManagedKey } from 'keygate';
import type { Dash, DashEnv } from '../context.js';
import { time } from '../views/format.js';
import { render } from './render.js';

/** Said when a key holds no permission: every request that needs one is refused. */
function noPermissions(keyPage: string) {
  return html`<p class="notice warn" id="no-permissions">This key has <strong>no permissions</strong>: every request that needs one is refused with 403 <code>insufficient_permissions</code>. Add permissions on <a href="${keyPage}">the key's page</a>.</p>`;
}

/**
 * The one response that shows a raw key: after creating or rotating. Sent with `Cache-Control:
 * no-store` (as every page) and never redirected to, so the key is in no URL, no history entry
 * and no cache; a reload posts the form again, whose one-time token then makes nothing. Focus
 * starts on the key (`autofocus`, no script needed).
 */
export function newKeyPage(
  c: Context<DashEnv>,
  dash: Dash,
  created: { secret: string; key: ManagedKey },
  rotatedFrom?: ManagedKey,
  oldKeyEndsAt?: string,
) {
  const { secret, key } = created;
  const keyPage = dash.path(`/keys/${encodeURIComponent(key.id)}`);
  const title = rotatedFrom ? 'Key rotated' : 'Key created';
  const oldPage = rotatedFrom ? dash.path(`/keys/${encodeURIComponent(rotatedFrom.id)}`) : '';
  const next =
    rotatedFrom && oldKeyEndsAt
      ? html`<h2>Next steps</h2>
      <ol class="steps">
        <li>Deploy the new key where <strong>${rotatedFrom.name}</strong> is used. <a href="${oldPage}">The old key</a> works until ${time(oldKeyEndsAt, true)}, then stops by itself.</li>
      </ol>`
      : rotatedFrom
        ? html`<h2>Next steps</h2>
      <ol class="steps">
        <li>Deploy the new key where <strong>${rotatedFrom.name}</strong> is used. Both keys work meanwhile.</li>
        <li>Watch <a href="${dash.path(`/keys/${encodeURIComponent(rotatedFrom.id)}`)}">the old key's page</a>: once the new key has been used and the old one has gone quiet, revoke the old key there.</li>
      </ol>`
        : html`<p><a href="${keyPage}">Go to the key's page</a> · <a href="${dash.path('/')}">Back to your API keys</a></p>`;
  c.header('Cache-Control', 'no-store');
  return render(
    c,
    dash,
    {
      title,
      body: html`<h1>${title}</h1>
      <div class="new-key" role="region" aria-labelledby="new-key-title">
        <h2 id="new-key-title">Copy your new key now</h2>
        <p>This is the only time it is shown. keygate keeps only a digest: nobody can show it to you again.</p>
        <div class="secret-row">
          <label for="new-api-key" class="visually-hidden">New API key</label>
          <input id="new-api-key" class="secret" readonly value="${secret}" autocomplete="off" spellcheck="false" autofocus>
          <button type="button" class="button" data-copy="new-api-key" hidden>Copy</button>
          <span class="copied" data-copied-for="new-api-key" role="status"></span>
        </div>
        <dl class="facts">
          <div><dt>Name</dt><dd><a href="${keyPage}">${key.name}</a></dd></div>
          <div><dt>Mode</dt><dd>${key.mode}</dd></div>
          <div><dt>Hint</dt><dd><code>${key.hint}</code></dd></div>
        </dl>
        ${key.permissions.length === 0 ? noPermissions(keyPage) : ''}
        <p class="hint">Keep it server-side, in an environment variable or a secret manager; never in client code or a repository.</p>
      </div>
      ${next}`,
    },
    201,
  );
}
