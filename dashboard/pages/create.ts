import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { CreateKeyInput } from 'keygate';
import { auditContextOf } from '../audit-context.js';
import type { Dash, DashEnv } from '../context.js';
import { type FieldErrors, type KeyFormValues, readKeyForm, validateKeyForm } from '../forms/key-form.js';
import { issueOnceToken, ONCE_FIELD, type OnceToken, openOnceToken, spendOnceToken } from '../forms/once-token.js';
import { fieldErrorOf } from './key.js';
import { FIELD_LABELS, keyFields } from './key-fields.js';
import { csrfField, onceField } from './layout.js';
import { newKeyPage } from './new-key.js';
import { errorSummary, messagePage, render } from './render.js';

const EMPTY: KeyFormValues = {
  name: '',
  mode: 'test',
  permissions: [],
  permissionsText: '',
  allowedIps: '',
  allowAny: false,
  expires: '',
  rateLimit: '',
  rateLimitWindow: 'minute',
};

async function createForm(c: Context<DashEnv>, dash: Dash, values: KeyFormValues, errors: FieldErrors) {
  const status = Object.keys(errors).length > 0 ? 422 : 200;
  const once = await issueOnceToken(dash, c.get('csrf'), 'create');
  return render(
    c,
    dash,
    {
      title: status === 422 ? 'Error: Create key' : 'Create key',
      body: html`<p class="crumbs"><a href="${dash.path('/')}">API keys</a></p>
      <h1>Create key</h1>
      ${errorSummary(errors, FIELD_LABELS)}
      <form method="post" action="${dash.path('/keys')}" class="form" novalidate>
        ${csrfField(c.get('csrf'))}
        ${onceField(once)}
        ${keyFields(dash, values, errors, { creating: true })}
        <div class="actions"><button type="submit" class="button primary">Create key</button> <a href="${dash.path('/')}">Cancel</a></div>
      </form>`,
    },
    status,
  );
}

/**
 * The answer to a create form sent again (a reload of "Key created"): nothing is created, and the
 * key the first sending made is linked, found by the name and mode it was sent with among the
 * account's keys created since the form was shown. Its secret is never shown again.
 */
async function alreadyCreated(c: Context<DashEnv>, dash: Dash, once: OnceToken, name: string, mode: string) {
  const made = (await dash.manager.list(c.get('account')))
    .filter((k) => k.name === name && k.mode === mode && Date.parse(k.createdAt) >= once.issuedAt)
    .sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt))[0];
  const back = html`<a href="${dash.path('/')}">Back to your API keys</a>`;
  if (!made) {
    return messagePage(
      c,
      dash,
      409,
      'Form already sent',
      'This form was sent before, and a form that makes a key is sent once only. Nothing new was created.',
      html`<p><a href="${dash.path('/keys/new')}">Open the form again</a> · ${back}</p>`,
    );
  }
  return messagePage(
    c,
    dash,
    409,
    'Key already created',
    'This form was sent before and the key was created then. Its secret was shown once and is not shown again. Nothing new was created.',
    html`<p><a href="${dash.path(`/keys/${encodeURIComponent(made.id)}`)}">Go to the key's page</a> · ${back}</p>`,
  );
}

/** `GET /keys/new` (the form) and `POST /keys` (create, then show the key once). */
export function registerCreate(app: Hono<DashEnv>, dash: Dash): void {
  app.get('/keys/new', (c) => createForm(c, dash, EMPTY, {}));

  app.post('/keys', async (c) => {
    const form = c.get('form');
    const values = readKeyForm(form, !!dash.catalogue);
    const { errors, input } = validateKeyForm(values, { now: dash.clock(), creating: true });
    if (Object.keys(errors).length > 0) return createForm(c, dash, values, errors);
    const once = await openOnceToken(dash, c.get('csrf'), 'create', form.get(ONCE_FIELD));
    if (!once) {
      return messagePage(
        c,
        dash,
        400,
        'Form expired',
        'This form can no longer be sent. Open it again and send it from there. Nothing was created.',
        html`<p><a href="${dash.path('/keys/new')}">Open the form again</a></p>`,
      );
    }
    if (!(await spendOnceToken(dash, once))) return alreadyCreated(c, dash, once, input.name, input.mode);
    // `rateLimit` is sent only when the host said its keys have rate limits (`rateLimits: true`).
    const create: CreateKeyInput & { rateLimit?: typeof input.rateLimit } = {
      accountId: c.get('account'),
      name: input.name,
      mode: input.mode,
      permissions: input.permissions,
      allowedIps: input.allowedIps,
      expiresAt: input.expiresAt,
      ...(dash.rateLimits ? { rateLimit: input.rateLimit } : {}),
    };
    let created: Awaited<ReturnType<typeof dash.manager.create>>;
    try {
      created = await dash.manager.create(create, await auditContextOf(c, dash));
    } catch (err) {
      // A rule the manager enforces that the form did not check first: still the form, still 422.
      const fieldError = fieldErrorOf(err);
      if (!fieldError) throw err;
      return createForm(c, dash, values, fieldError);
    }
    return newKeyPage(c, dash, created);
  });
}
