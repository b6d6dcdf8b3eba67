import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import { InvalidInputError } from 'keygate';
import { auditContextOf } from '../audit-context.js';
import type { Dash, DashEnv } from '../context.js';
import { csrfField } from './layout.js';
import { type KeyView, ownKey } from './own-key.js';
import { keyNotFound, messagePage } from './render.js';

/** What the suspend form shows again after a refused reason: the text typed and why it was refused. */
export interface SuspendFormState {
  readonly reason: string;
  readonly error: string;
}

/**
 * "Suspend key" with its optional "Reason" (an active key), or "Resume key" (a suspended one): each
 * a POST carrying the CSRF token, like every change.
 */
export function suspendForm(dash: Dash, key: KeyView, csrf: string, state?: SuspendFormState) {
  const base = dash.path(`/keys/${encodeURIComponent(key.id)}`);
  if (key.status === 'suspended') {
    return html`<form method="post" action="${base}/resume">${csrfField(csrf)}<button type="submit" class="button primary">Resume key</button></form>`;
  }
  const invalid = state
    ? html` aria-invalid="true" aria-describedby="suspend-reason-error"`
    : html` aria-describedby="suspend-reason-hint"`;
  return html`<form method="post" action="${base}/suspend" class="form">
      ${csrfField(csrf)}
      <div class="field">
        <label for="suspend-reason">Reason</label>
        <input id="suspend-reason" name="reason" maxlength="500" autocomplete="off" value="${state?.reason ?? ''}"${invalid}>
        ${
          state
            ? html`<p class="error" id="suspend-reason-error">${state.error}</p>`
            : html`<p class="hint" id="suspend-reason-hint">Optional; shown with the key while it is suspended.</p>`
        }
      </div>
      <div class="actions"><button type="submit" class="button">Suspend key</button></div>
    </form>`;
}

/**
 * `POST /keys/:id/suspend` (with an optional `reason`) and `POST /keys/:id/resume`. Suspending a
 * suspended key or resuming an active one changes nothing; a revoked key is a 409 and nothing changes.
 * A refused reason shows the key page again with 422, the text kept and the reason named.
 */
export function registerSuspend(
  app: Hono<DashEnv>,
  dash: Dash,
  keyPage: (c: Context<DashEnv>, key: KeyView, state: SuspendFormState) => Promise<Response>,
): void {
  app.post('/keys/:id/suspend', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    if (key.status === 'revoked') return messagePage(c, dash, 409, 'Key revoked', 'A revoked key cannot be suspended.');
    const typed = c.get('form').get('reason') ?? '';
    try {
      const context = await auditContextOf(c, dash);
      await dash.manager.suspend(key.id, typed.trim() === '' ? context : { ...context, reason: typed });
    } catch (err) {
      if (!(err instanceof InvalidInputError)) throw err;
      return keyPage(c, key, { reason: typed, error: err.message });
    }
    return c.redirect(dash.path(`/keys/${encodeURIComponent(key.id)}?done=suspended`), 303);
  });

  app.post('/keys/:id/resume', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    if (key.status === 'revoked') return messagePage(c, dash, 409, 'Key revoked', 'A revoked key cannot be resumed.');
    await dash.manager.resume(key.id, await auditContextOf(c, dash));
    return c.redirect(dash.path(`/keys/${encodeURIComponent(key.id)}?done=resumed`), 303);
  });
}
