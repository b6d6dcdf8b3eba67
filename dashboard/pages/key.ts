import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import {
  InvalidInputError,
  type NamedRateLimit,
  UnsupportedError,
  type UpdateKeyInput,
  type UsageReport,
} from 'keygate';
import { utcDay } from 'keygate/store-kit';
import { auditContextOf } from '../audit-context.js';
import type { Dash, DashEnv } from '../context.js';
import {
  type FieldErrors,
  formErrorsOf,
  type KeyFormValues,
  type RateLimitSetting,
  readKeyForm,
  validateKeyForm,
  valuesOfKey,
} from '../forms/key-form.js';
import { issueOnceToken } from '../forms/once-token.js';
import { dayRange } from '../views/chart.js';
import { badge, time } from '../views/format.js';
import { keyHistorySection } from './history.js';
import { FIELD_LABELS, keyFields } from './key-fields.js';
import { csrfField, onceField } from './layout.js';
import { type KeyView, ownKey } from './own-key.js';
import { errorSummary, keyNotFound, messagePage, render } from './render.js';
import { graceField, rotationOf, rotationSection } from './rotation.js';
import { type Partners, partnerLink, partnersOf } from './rotation-pair.js';
import { registerSuspend, type SuspendFormState, suspendForm } from './suspend.js';
import { usageSection } from './usage.js';

const DONE: Record<string, string> = {
  saved: 'Changes saved.',
  revoked: 'The key is revoked. It will never authenticate again.',
  suspended: 'The key is suspended: it is refused until you resume it.',
  resumed: 'The key is active again.',
};

const STATUS_TONE = { active: 'ok', suspended: 'warn', revoked: 'bad' } as const;

function facts(dash: Dash, key: KeyView, partners: Partners) {
  return html`<dl class="facts">
    <div><dt>Status</dt><dd>${badge(key.status, STATUS_TONE[key.status] ?? 'bad')}${key.rotationDue && !key.rotatedTo ? html` ${badge('rotation due', 'warn')}` : ''}</dd></div>
    <div><dt>Mode</dt><dd>${badge(key.mode, key.mode === 'live' ? 'warn' : 'plain')}</dd></div>
    <div><dt>Hint</dt><dd><code>${key.hint}</code></dd></div>
    <div><dt>ID</dt><dd><code>${key.id}</code></dd></div>
    <div><dt>Created</dt><dd>${time(key.createdAt, true)} (${key.ageDays} days ago)</dd></div>
    <div><dt>Expires</dt><dd>${time(key.expiresAt, true, 'never')}</dd></div>
    ${key.revokedAt ? html`<div><dt>Revoked</dt><dd>${time(key.revokedAt, true)}</dd></div>` : ''}
    ${key.status === 'suspended' ? html`<div><dt>Suspended</dt><dd>${time(key.suspendedAt, true)}</dd></div><div><dt>Reason</dt><dd>${key.suspendedReason ?? 'none given'}</dd></div>` : ''}
    ${key.rotatedFrom ? html`<div><dt>Rotated from</dt><dd>${partnerLink(dash, key.rotatedFrom, partners)}</dd></div>` : ''}
    ${key.rotatedTo ? html`<div><dt>Replaced by</dt><dd>${partnerLink(dash, key.rotatedTo, partners)}</dd></div>` : ''}
  </dl>`;
}

/**
 * "Rotate key" with "Old key stays valid for" (a POST with a one-time token, so a reload of "Key
 * rotated" makes no second key), "Suspend key" or "Resume key", and "Revoke key": a link to the
 * confirmation page, shown as a button, so the page it opens has a clean URL (a GET form would add a
 * stray `?`). `once` is the rotate form's token, null while a rotation is under way or the key is
 * revoked (no "Rotate key" then); a suspended key rotates, and stays suspended.
 */
function actions(dash: Dash, key: KeyView, csrf: string, once: string | null, suspending?: SuspendFormState) {
  const base = `/keys/${encodeURIComponent(key.id)}`;
  return html`<section class="card" aria-labelledby="actions-title">
    <h2 id="actions-title">Rotate, suspend or revoke</h2>
    ${
      once === null
        ? ''
        : html`<form method="post" action="${dash.path(`${base}/rotate`)}" class="form">${csrfField(csrf)}${onceField(once)}
      <div class="field">${graceField()}</div>
      <div class="actions"><button type="submit" class="button">Rotate key</button></div></form>`
    }
    ${suspendForm(dash, key, csrf, suspending)}
    <div class="row">
      <a class="button danger" role="button" href="${dash.path(`${base}/revoke`)}">Revoke key</a>
    </div>
    <p class="hint">Rotating creates a new key with the same settings; the old one works until you revoke it, or for the time chosen. A suspended key is refused until you resume it; rotating it gives an active new key and leaves it suspended. Revoking is permanent.</p>
  </section>`;
}

async function keyPage(
  c: Context<DashEnv>,
  dash: Dash,
  key: KeyView,
  form?: { values: KeyFormValues; errors: FieldErrors },
  suspending?: SuspendFormState,
) {
  const today = utcDay(dash.clock());
  const days = dayRange(today, 30);
  const [report, rotation, partners, history] = await Promise.all([
    usageOf(dash, key, days),
    rotationOf(dash, key),
    partnersOf(dash, key.accountId, [key]),
    keyHistorySection(dash, key),
  ]);
  const csrf = c.get('csrf');
  const done = DONE[c.req.query('done') ?? ''];
  // A suspended key keeps its settings form: what it may do can change while it is stopped.
  const changeable = key.status !== 'revoked';
  const rotating = rotation !== null && rotation.step !== 'revoked';
  // A suspended key rotates too (one suspended as leaked is replaced without working again).
  const once = changeable && !rotating ? await issueOnceToken(dash, csrf, `rotate:${key.id}`) : null;
  const errors = form?.errors ?? {};
  const suspendedNotice =
    key.status === 'suspended'
      ? html`<p class="notice warn">This key is <strong>suspended</strong>: it is refused with 403 <code>key_suspended</code> until it is resumed.</p>`
      : '';
  const settings = changeable
    ? html`<section class="card" aria-labelledby="settings-title">
    <h2 id="settings-title">Settings</h2>
    ${errorSummary(errors, FIELD_LABELS)}
    <form method="post" action="${dash.path(`/keys/${encodeURIComponent(key.id)}`)}" class="form" novalidate>
      ${csrfField(csrf)}
      ${keyFields(dash, form?.values ?? valuesOfKey(key), errors, { creating: false, currentAllowedIps: key.allowedIps, namedLimits: namedOf(key) })}
      <div class="actions"><button type="submit" class="button primary">Save changes</button></div>
    </form>
  </section>`
    : html`<p class="notice">This key is <strong>revoked</strong>: it no longer authenticates and cannot be changed.</p>`;
  return render(
    c,
    dash,
    {
      title: form || suspending ? `Error: ${key.name}` : key.name,
      body: html`<p class="crumbs"><a href="${dash.path('/')}">API keys</a></p>
      <h1>${key.name}</h1>
      ${done ? html`<p class="flash" role="status">${done}</p>` : ''}
      ${suspendedNotice}
      ${facts(dash, key, partners)}
      ${rotation ? rotationSection(dash, key, rotation) : ''}
      ${report ? usageSection(report, days) : html`<section class="card" aria-labelledby="usage-title"><h2 id="usage-title">Usage</h2><p class="muted">This key store keeps no usage statistics.</p></section>`}
      ${settings}
      ${changeable ? actions(dash, key, csrf, once, suspending) : ''}
      ${history}`,
    },
    form || suspending ? 422 : 200,
  );
}

/** The key's usage over `days`, or null when the manager's store keeps no usage statistics (`UnsupportedError`). */
async function usageOf(dash: Dash, key: KeyView, days: readonly string[]): Promise<UsageReport | null> {
  try {
    return await dash.manager.usage(key.id, { from: days[0], to: days.at(-1) });
  } catch (err) {
    if (err instanceof UnsupportedError) return null;
    throw err;
  }
}

// A key's named limits, which the form lists but does not edit.
const namedOf = (key: KeyView) =>
  Array.isArray(key.rateLimit) ? (key.rateLimit as readonly NamedRateLimit[]) : undefined;

/** The changes a valid settings form asks for: only fields that differ from what the form showed. */
function changesOf(
  dash: Dash,
  key: KeyView,
  values: KeyFormValues,
  input: ReturnType<typeof validateKeyForm>['input'],
) {
  const shown = valuesOfKey(key);
  const changes: UpdateKeyInput & { rateLimit?: RateLimitSetting | null } = {
    name: input.name,
    permissions: input.permissions,
    allowedIps: input.allowedIps,
  };
  if (values.expires !== shown.expires) changes.expiresAt = input.expiresAt;
  const changed = values.rateLimit !== shown.rateLimit || values.rateLimitWindow !== shown.rateLimitWindow;
  if (dash.rateLimits && !namedOf(key) && changed) {
    changes.rateLimit = input.rateLimit;
  }
  return changes;
}

/**
 * The manager's `InvalidInputError` as form errors, placed by its issues' fields: `allowedIps` on
 * "Allowed IPs", `rateLimit.limit` on "Rate limit", `expiresAt` on "Expires"; a field the form does
 * not have goes under "Name".
 */
export function fieldErrorOf(err: unknown): FieldErrors | null {
  return err instanceof InvalidInputError ? formErrorsOf(err.issues) : null;
}

/** `GET /keys/:id` (the key page), `POST /keys/:id` (save its settings), and suspend and resume. */
export function registerKey(app: Hono<DashEnv>, dash: Dash): void {
  registerSuspend(app, dash, (c, key, state) => keyPage(c, dash, key, undefined, state));
  app.get('/keys/:id', async (c) => {
    const key = await ownKey(c, dash);
    return key ? keyPage(c, dash, key) : keyNotFound(c, dash);
  });

  app.post('/keys/:id', async (c) => {
    const key = await ownKey(c, dash);
    if (!key) return keyNotFound(c, dash);
    if (key.status === 'revoked') {
      return messagePage(c, dash, 409, 'Key revoked', 'A revoked key cannot be changed. Nothing was saved.');
    }
    const values = readKeyForm(c.get('form'), !!dash.catalogue);
    const { errors, input } = validateKeyForm(values, {
      now: dash.clock(),
      creating: false,
      currentAllowedIps: key.allowedIps,
    });
    if (Object.keys(errors).length > 0) return keyPage(c, dash, key, { values, errors });
    try {
      await dash.manager.update(key.id, changesOf(dash, key, values, input), await auditContextOf(c, dash));
    } catch (err) {
      const fieldError = fieldErrorOf(err);
      if (!fieldError) throw err;
      return keyPage(c, dash, key, { values, errors: fieldError });
    }
    return c.redirect(dash.path(`/keys/${encodeURIComponent(key.id)}?done=saved`), 303);
  });
}
