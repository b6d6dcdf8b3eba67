import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { ManagedKey, RotationStatus } from 'keygate';
import { auditContextOf } from '../audit-context.js';
import type { Dash, DashEnv } from '../context.js';
import { duration } from '../views/format.js';
import { csrfField } from './layout.js';
import { ownKey } from './own-key.js';
import { keyNotFound, messagePage, render } from './render.js';

/** What the confirmation shows again after a wrong name, and the rotation it finishes, if any. */
export interface ConfirmState {
  /** The rotation this revocation finishes ("Revoke old key"): posted to `finish-rotation`. */
  rotation?: RotationStatus;
  typed?: string;
  wrong?: boolean;
}

/**
 * The typed-name confirmation of a revocation, "Revoke key" and "Revoke old key" alike: a field
 * "Type the key name to confirm" and a button "Revoke permanently"; 422 after a wrong name.
 */
export function confirmPage(c: Context<DashEnv>, dash: Dash, key: ManagedKey, state: ConfirmState = {}) {
  const { rotation, typed = '', wrong = false } = state;
  const base = `/keys/${encodeURIComponent(key.id)}`;
  const keyPage = dash.path(base);
  const heading = rotation ? 'Revoke old key' : 'Revoke key';
  return render(
    c,
    dash,
    {
      title: wrong ? `Error: ${heading}` : heading,
      body: html`<p class="crumbs"><a href="${dash.path('/')}">API keys</a> / <a href="${keyPage}">${key.name}</a></p>
      <h1>${heading}</h1>
      <div class="card danger-zone">
        <p>Revoking <strong>${key.name}</strong> (<code>${key.hint}</code>) is permanent: every request that uses it is refused from then on, and it cannot be restored.</p>
        ${
          rotation
            ? html`<p>This finishes the rotation to <a href="${dash.path(`/keys/${encodeURIComponent(rotation.newKeyId)}`)}">the new key</a>. If this key has been used in the last ${duration(rotation.quietForMs)} when you confirm, nothing is revoked.</p>`
            : ''
        }
        <form method="post" action="${dash.path(rotation ? `${base}/finish-rotation` : `${base}/revoke`)}" class="form" novalidate>
          ${csrfField(c.get('csrf'))}
          <div class="field${wrong ? ' has-error' : ''}">
            <label for="confirm">Type the key name to confirm</label>
            ${
              wrong
                ? html`<p class="error" id="confirm-error" role="alert"><span class="visually-hidden">Error: </span>That is not the key's name. Nothing was revoked.</p>`
                : ''
            }
            <input id="confirm" name="confirm" autocomplete="off" spellcheck="false" value="${typed}"${wrong ? html` aria-invalid="true" aria-describedby="confirm-error"` : ''}>
          </div>
          <div class="actions"><button type="submit" class="button danger">Revoke permanently</button> <a href="${keyPage}">Cancel</a></div>
        </form>
      </div>`,
    },
    wrong ? 422 : 200,
  );
}

/** `GET /keys/:id/revoke` (the confirmation) and `POST /keys/:id/revoke` (revoke when the typed name matches). */
export function registerRevoke(app: Hono<DashEnv>, dash: Dash): void {
  app.get('/keys/:id/revoke', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    if (key.status === 'revoked') return c.redirect(dash.path(`/keys/${encodeURIComponent(key.id)}`), 303);
    return confirmPage(c, dash, key);
  });

  app.post('/keys/:id/revoke', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    if (key.status === 'revoked') return messagePage(c, dash, 409, 'Key revoked', 'This key is already revoked.');
    const typed = c.get('form').get('confirm') ?? '';
    if (typed.trim() !== key.name) return confirmPage(c, dash, key, { typed, wrong: true });
    await dash.manager.revoke(key.id, await auditContextOf(c, dash));
    return c.redirect(dash.path(`/keys/${encodeURIComponent(key.id)}?done=revoked`), 303);
  });
}
