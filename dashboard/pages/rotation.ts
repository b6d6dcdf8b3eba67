import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { ManagedKey, RotationStatus } from 'keygate';
import type { Dash, DashEnv } from '../context.js';
import { duration, time } from '../views/format.js';
import { csrfField } from './layout.js';
import { newKeyPage } from './new-key.js';
import { ownKey } from './own-key.js';
import { keyNotFound, messagePage } from './render.js';

/** The rotation status of `key` (an old key that has a successor), or null when it cannot be read. */
export async function rotationOf(dash: Dash, key: ManagedKey): Promise<RotationStatus | null> {
  if (!key.rotatedTo) return null;
  try {
    return await dash.manager.rotationStatus(key.id);
  } catch {
    return null; // the successor is gone: nothing to confirm
  }
}

/**
 * The old key's "Rotation" section: has the new key been seen, has this one gone quiet, and the
 * button that finishes the rotation, enabled only once that overlap is safe.
 */
export function rotationSection(dash: Dash, key: ManagedKey, status: RotationStatus, csrf: string) {
  const newPage = dash.path(`/keys/${encodeURIComponent(status.newKeyId)}`);
  if (status.step === 'revoked') {
    return html`<section class="card" aria-labelledby="rotation-title"><h2 id="rotation-title">Rotation</h2>
      <p>Rotated on ${time(status.rotatedAt, true)} to <a href="${newPage}">the new key</a>; this key is revoked.</p></section>`;
  }
  const quietEnough = status.oldKeyQuietForMs >= status.quietForMs;
  return html`<section class="card" aria-labelledby="rotation-title">
    <h2 id="rotation-title">Rotation</h2>
    <p>Rotated on ${time(status.rotatedAt, true)} to <a href="${newPage}">the new key</a>. Both keys work until this one is revoked.</p>
    <ul class="checklist">
      <li class="${status.newKeyUsed ? 'done' : 'todo'}"><strong>New key seen:</strong> ${
        status.newKeyUsed ? html`yes, last used ${time(status.newKeyLastUsedAt, true)}` : 'not yet'
      }</li>
      <li class="${quietEnough ? 'done' : 'todo'}"><strong>Old key quiet:</strong> ${
        quietEnough ? 'yes' : 'not yet'
      }, for ${duration(status.oldKeyQuietForMs)} (needs ${duration(status.quietForMs)})</li>
    </ul>
    <form method="post" action="${dash.path(`/keys/${encodeURIComponent(key.id)}/finish-rotation`)}">
      ${csrfField(csrf)}
      <button type="submit" class="button danger" aria-describedby="finish-hint"${status.safeToRevoke ? '' : ' disabled'}>Revoke old key</button>
      <p class="hint" id="finish-hint">${
        status.safeToRevoke
          ? 'The new key carries the traffic: revoking this key finishes the rotation.'
          : `Enabled once the new key has been used and this key has been quiet for ${duration(status.quietForMs)}.`
      }</p>
    </form>
  </section>`;
}

/**
 * `POST /keys/:id/rotate` (a successor, shown once) and `POST /keys/:id/finish-rotation` (revokes the
 * old key, only once the overlap is safe).
 */
export function registerRotation(app: Hono<DashEnv>, dash: Dash): void {
  app.post('/keys/:id/rotate', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    if (key.status === 'revoked') return messagePage(c, dash, 409, 'Key revoked', 'A revoked key cannot be rotated.');
    const created = await dash.manager.rotate(key.id);
    return newKeyPage(c, dash, created, key);
  });

  app.post('/keys/:id/finish-rotation', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    const status = await rotationOf(dash, key);
    if (!status || key.status === 'revoked' || !status.safeToRevoke) {
      return messagePage(
        c,
        dash,
        409,
        'Not yet safe to revoke',
        'The new key has not been used yet, or this key is still in use. Nothing was revoked.',
        html`<p><a href="${dash.path(`/keys/${encodeURIComponent(key.id)}`)}">Back to the key</a></p>`,
      );
    }
    // The manager checks the quiet window again as it revokes: traffic since the status was read
    // makes it refuse with KeyInUseError (a 409 page), and nothing is revoked.
    await dash.manager.revoke(key.id, { quietForMs: status.quietForMs });
    return c.redirect(dash.path(`/keys/${encodeURIComponent(key.id)}?done=revoked`), 303);
  });
}
