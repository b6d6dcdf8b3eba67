import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { ManagedKey, RotationStatus } from 'keygate';
import { auditContextOf } from '../audit-context.js';
import type { Dash, DashEnv } from '../context.js';
import { ONCE_FIELD, openOnceToken, spendOnceToken } from '../forms/once-token.js';
import { duration, time } from '../views/format.js';
import { newKeyPage } from './new-key.js';
import { ownKey } from './own-key.js';
import { keyNotFound, messagePage } from './render.js';
import { confirmPage } from './revoke.js';

const HOUR = 3_600_000;

/**
 * The choices of "Old key stays valid for" on the rotate form, by the value the form sends: a grace
 * in milliseconds, or `undefined` for today's rotation (both keys work until the old one is revoked
 * after the traffic has moved), the default.
 */
export const GRACE_CHOICES: ReadonlyArray<readonly [value: string, label: string, graceMs: number | undefined]> = [
  ['none', 'none (ends at once)', 0],
  ['1h', '1 hour', HOUR],
  ['24h', '24 hours', 24 * HOUR],
  ['7d', '7 days', 7 * 24 * HOUR],
  ['confirm', 'until I confirm from traffic', undefined],
];

/** The "Old key stays valid for" field of the rotate form. */
export function graceField() {
  return html`<label for="rotate-grace">Old key stays valid for</label>
    <select id="rotate-grace" name="grace">${GRACE_CHOICES.map(
      ([value, label]) => html`<option value="${value}"${value === 'confirm' ? ' selected' : ''}>${label}</option>`,
    )}</select>`;
}

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
 * The old key's "Rotation" section: has the new key been seen, has this one gone quiet, and "Revoke
 * old key", which leads to the typed-name confirmation only once that overlap is safe (a disabled
 * button before).
 */
export function rotationSection(dash: Dash, key: ManagedKey, status: RotationStatus) {
  const newPage = dash.path(`/keys/${encodeURIComponent(status.newKeyId)}`);
  if (status.step === 'revoked') {
    return html`<section class="card" aria-labelledby="rotation-title"><h2 id="rotation-title">Rotation</h2>
      <p>Rotated on ${time(status.rotatedAt, true)} to <a href="${newPage}">the new key</a>; this key is revoked.</p></section>`;
  }
  const quietEnough = status.oldKeyQuietForMs >= status.quietForMs;
  const finish = dash.path(`/keys/${encodeURIComponent(key.id)}/finish-rotation`);
  return html`<section class="card" aria-labelledby="rotation-title">
    <h2 id="rotation-title">Rotation</h2>
    <p>Rotated on ${time(status.rotatedAt, true)} to <a href="${newPage}">the new key</a>. ${
      key.expiresAt
        ? html`Both keys work until this one expires on ${time(key.expiresAt, true)}, or is revoked.`
        : 'Both keys work until this one is revoked.'
    }</p>
    <ul class="checklist">
      <li class="${status.newKeyUsed ? 'done' : 'todo'}"><strong>New key seen:</strong> ${
        status.newKeyUsed ? html`yes, last used ${time(status.newKeyLastUsedAt, true)}` : 'not yet'
      }</li>
      <li class="${quietEnough ? 'done' : 'todo'}"><strong>Old key quiet:</strong> ${
        quietEnough ? 'yes' : 'not yet'
      }, for ${duration(status.oldKeyQuietForMs)} (needs ${duration(status.quietForMs)})</li>
    </ul>
    <div class="row">${
      status.safeToRevoke
        ? html`<a class="button danger" role="button" href="${finish}" aria-describedby="finish-hint">Revoke old key</a>`
        : html`<button type="button" class="button danger" aria-describedby="finish-hint" disabled>Revoke old key</button>`
    }</div>
    <p class="hint" id="finish-hint">${
      status.safeToRevoke
        ? 'The new key carries the traffic: revoking this key finishes the rotation.'
        : `Enabled once the new key has been used and this key has been quiet for ${duration(status.quietForMs)}.`
    }</p>
  </section>`;
}

/** The 409 for finishing a rotation that is not safe yet (or not a rotation at all). */
function notYetSafe(c: Context<DashEnv>, dash: Dash, key: ManagedKey) {
  return messagePage(
    c,
    dash,
    409,
    'Not yet safe to revoke',
    'The new key has not been used yet, or this key is still in use. Nothing was revoked.',
    html`<p><a href="${dash.path(`/keys/${encodeURIComponent(key.id)}`)}">Back to the key</a></p>`,
  );
}

/** The answer to a rotate form sent again: nothing is rotated twice, and the new key is linked, never shown. */
function alreadyRotated(c: Context<DashEnv>, dash: Dash, key: ManagedKey) {
  const page = (id: string) => dash.path(`/keys/${encodeURIComponent(id)}`);
  return messagePage(
    c,
    dash,
    409,
    'Key already rotated',
    'This form was sent before and the key was rotated then. The new key was shown once and is not shown again. Nothing new was created.',
    html`<p>${key.rotatedTo ? html`<a href="${page(key.rotatedTo)}">Go to the new key's page</a> · ` : ''}<a href="${page(key.id)}">Back to the old key</a></p>`,
  );
}

/** The old key with its rotation status when finishing the rotation is safe now, else null. */
async function finishable(dash: Dash, key: ManagedKey): Promise<RotationStatus | null> {
  const status = await rotationOf(dash, key);
  return status && key.status === 'active' && status.safeToRevoke ? status : null;
}

/**
 * `POST /keys/:id/rotate` (a successor, shown once; a one-time token makes a form sent again rotate
 * nothing), and `GET`/`POST /keys/:id/finish-rotation`: the typed-name confirmation of revoking the
 * old key, offered and done only once the overlap is safe.
 */
export function registerRotation(app: Hono<DashEnv>, dash: Dash): void {
  app.post('/keys/:id/rotate', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    const once = await openOnceToken(dash, c.get('csrf'), `rotate:${key.id}`, c.get('form').get(ONCE_FIELD));
    if (!once) {
      return messagePage(
        c,
        dash,
        400,
        'Form expired',
        'This form can no longer be sent. Open the key again and rotate it from there. Nothing was rotated.',
        html`<p><a href="${dash.path(`/keys/${encodeURIComponent(key.id)}`)}">Back to the key</a></p>`,
      );
    }
    const choice = GRACE_CHOICES.find(([value]) => value === (c.get('form').get('grace') ?? 'confirm'));
    if (!choice) {
      return messagePage(
        c,
        dash,
        422,
        'Unknown choice',
        'Choose how long the old key stays valid. Nothing was rotated.',
      );
    }
    if (!(await spendOnceToken(dash, once))) return alreadyRotated(c, dash, key);
    if (key.status === 'revoked') return messagePage(c, dash, 409, 'Key revoked', 'A revoked key cannot be rotated.');
    const graceMs = choice[2];
    const context = await auditContextOf(c, dash);
    const created = await dash.manager.rotate(key.id, graceMs === undefined ? context : { ...context, graceMs });
    const endsAt = graceMs === undefined ? undefined : ((await dash.manager.get(key.id))?.expiresAt ?? undefined);
    return newKeyPage(c, dash, created, key, endsAt);
  });

  app.get('/keys/:id/finish-rotation', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    const status = await finishable(dash, key);
    return status ? confirmPage(c, dash, key, { rotation: status }) : notYetSafe(c, dash, key);
  });

  app.post('/keys/:id/finish-rotation', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    const status = await finishable(dash, key);
    if (!status) return notYetSafe(c, dash, key);
    const typed = c.get('form').get('confirm') ?? '';
    if (typed.trim() !== key.name) return confirmPage(c, dash, key, { rotation: status, typed, wrong: true });
    // The manager checks the quiet window again as it revokes: traffic since the status was read
    // makes it refuse with KeyInUseError (a 409 page), and nothing is revoked.
    await dash.manager.revoke(key.id, { quietForMs: status.quietForMs, ...(await auditContextOf(c, dash)) });
    return c.redirect(dash.path(`/keys/${encodeURIComponent(key.id)}?done=revoked`), 303);
  });
}
