import { html } from 'hono/html';
import type { NamedRateLimit } from 'keygate';
import type { Dash } from '../context.js';
import { type FieldErrors, type KeyFormValues, RATE_LIMIT_WINDOWS } from '../forms/key-form.js';

/** Labels of the key form's fields, as the error summary names them. */
export const FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  mode: 'Mode',
  permissions: 'Permissions',
  allowedIps: 'Allowed IPs',
  expires: 'Expires',
  rateLimit: 'Rate limit',
};

function described(id: string, error: string | undefined, hint: boolean) {
  const ids = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`${ids ? html` aria-describedby="${ids}"` : ''}${error ? html` aria-invalid="true"` : ''}`;
}

function errorText(id: string, error: string | undefined) {
  return error ? html`<p class="error" id="${id}-error"><span class="visually-hidden">Error: </span>${error}</p>` : '';
}

// A key without permissions is allowed, and refused by every route that needs one: the form says so.
const NONE_HINT = 'A key with none is refused by every request that needs a permission.';

function permissionsField(dash: Dash, values: KeyFormValues, error: string | undefined) {
  if (!dash.catalogue) {
    return html`<div class="field${error ? ' has-error' : ''}">
      <label for="permissions">Permissions</label>
      <p class="hint" id="permissions-hint">One permission per line, such as <code>email:verify</code>. ${NONE_HINT}</p>
      ${errorText('permissions', error)}
      <textarea id="permissions" name="permissionsText" rows="3" spellcheck="false" autocomplete="off"${described('permissions', error, true)}>${values.permissionsText}</textarea>
    </div>`;
  }
  // Permissions the key holds that the catalogue does not list stay visible, so saving never drops them unseen.
  const names = [...dash.catalogue, ...values.permissions.filter((p) => !dash.catalogue?.includes(p))];
  return html`<fieldset class="field${error ? ' has-error' : ''}" id="permissions"${described('permissions', error, true)}>
    <legend>Permissions</legend>
    <p class="hint" id="permissions-hint">${NONE_HINT}</p>
    ${errorText('permissions', error)}
    <div class="checks">${names.map(
      (name, i) =>
        html`<div class="check"><input type="checkbox" id="permission-${i}" name="permissions" value="${name}"${values.permissions.includes(name) ? ' checked' : ''}><label for="permission-${i}">${name}</label></div>`,
    )}</div>
  </fieldset>`;
}

// A key held to several named limits: they are listed, not editable here (the form edits one limit),
// so that saving the form leaves them as they are.
function namedLimitsField(named: readonly NamedRateLimit[]) {
  return html`<div class="field">
    <p><strong>Rate limits</strong></p>
    <p class="hint">This key is held to several named limits, all at once; change them through the API or the CLI.</p>
    <ul>${named.map((l) => html`<li><code>${l.name}</code>: ${String(l.limit)} per ${describeWindow(l.windowMs)}</li>`)}</ul>
  </div>`;
}

function describeWindow(windowMs: number): string {
  const unit = [...RATE_LIMIT_WINDOWS].reverse().find(([, ms]) => windowMs % ms === 0);
  if (!unit) return `${windowMs} ms`;
  const count = windowMs / unit[1];
  return count === 1 ? unit[0] : `${count} ${unit[0]}s`;
}

function rateLimitField(values: KeyFormValues, error: string | undefined, named?: readonly NamedRateLimit[]) {
  if (named) return namedLimitsField(named);
  return html`<div class="field${error ? ' has-error' : ''}">
    <label for="rateLimit">Rate limit</label>
    <p class="hint" id="rateLimit-hint">Requests this key may make per window. Leave empty for the service's default.</p>
    ${errorText('rateLimit', error)}
    <div class="row">
      <input id="rateLimit" name="rateLimit" inputmode="numeric" size="8" value="${values.rateLimit}"${described('rateLimit', error, true)}>
      <label for="rateLimitWindow">requests per</label>
      <select id="rateLimitWindow" name="rateLimitWindow">${RATE_LIMIT_WINDOWS.map(
        ([name]) => html`<option value="${name}"${values.rateLimitWindow === name ? ' selected' : ''}>${name}</option>`,
      )}</select>
    </div>
  </div>`;
}

/**
 * The fields of the create form and of the key page's settings form. `creating` adds "Mode";
 * `currentAllowedIps` (the key's list, when not empty) adds the "Allow any address" checkbox;
 * `namedLimits` (a key held to several named limits) lists them instead of the rate-limit field.
 */
export function keyFields(
  dash: Dash,
  values: KeyFormValues,
  errors: FieldErrors,
  options: { creating: boolean; currentAllowedIps?: readonly string[]; namedLimits?: readonly NamedRateLimit[] },
) {
  const guardClear = (options.currentAllowedIps?.length ?? 0) > 0;
  return html`
  <div class="field${errors.name ? ' has-error' : ''}">
    <label for="name">Name</label>
    <p class="hint" id="name-hint">Where the key is used, such as “production server” or “CI”.</p>
    ${errorText('name', errors.name)}
    <input id="name" name="name" maxlength="200" required autocomplete="off" value="${values.name}"${described('name', errors.name, true)}>
  </div>
  ${
    options.creating
      ? html`<div class="field${errors.mode ? ' has-error' : ''}">
    <label for="mode">Mode</label>
    <p class="hint" id="mode-hint"><code>test</code> keys see sandbox data and are never billed; <code>live</code> keys see real data and are billed.</p>
    ${errorText('mode', errors.mode)}
    <select id="mode" name="mode"${described('mode', errors.mode, true)}>
      <option value="test"${values.mode !== 'live' ? ' selected' : ''}>test</option>
      <option value="live"${values.mode === 'live' ? ' selected' : ''}>live</option>
    </select>
  </div>`
      : ''
  }
  ${permissionsField(dash, values, errors.permissions)}
  <div class="field${errors.allowedIps ? ' has-error' : ''}">
    <label for="allowedIps">Allowed IPs</label>
    <p class="hint" id="allowedIps-hint">One IPv4 or IPv6 address or CIDR range per line, such as <code>203.0.113.0/24</code>. Empty allows any address.</p>
    ${errorText('allowedIps', errors.allowedIps)}
    <textarea id="allowedIps" name="allowedIps" rows="4" spellcheck="false" autocomplete="off"${described('allowedIps', errors.allowedIps, true)}>${values.allowedIps}</textarea>
    ${
      guardClear
        ? html`<div class="check"><input type="checkbox" id="allowAny" name="allowAny"${values.allowAny ? ' checked' : ''}><label for="allowAny">Allow any address</label></div>
    <p class="hint">Needed to save an empty list: the key then works from any address.</p>`
        : ''
    }
  </div>
  <div class="field${errors.expires ? ' has-error' : ''}">
    <label for="expires">Expires</label>
    <p class="hint" id="expires-hint">Optional. A date as YYYY-MM-DD, such as 2030-01-31: the key stops working at 00:00 UTC on this day.</p>
    ${errorText('expires', errors.expires)}
    <input id="expires" class="short" name="expires" type="text" pattern="[0-9]{4}-[0-9]{2}-[0-9]{2}" maxlength="10" size="12" placeholder="YYYY-MM-DD" autocomplete="off" value="${values.expires}"${described('expires', errors.expires, true)}>
  </div>
  ${dash.rateLimits ? rateLimitField(values, errors.rateLimit, options.namedLimits) : ''}`;
}
