import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { CreateKeyInput } from 'keygate';
import type { Dash, DashEnv } from '../context.js';
import { type FieldErrors, type KeyFormValues, readKeyForm, validateKeyForm } from '../forms/key-form.js';
import { fieldErrorOf } from './key.js';
import { FIELD_LABELS, keyFields } from './key-fields.js';
import { csrfField } from './layout.js';
import { newKeyPage } from './new-key.js';
import { errorSummary, render } from './render.js';

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

function createForm(c: Parameters<typeof render>[0], dash: Dash, values: KeyFormValues, errors: FieldErrors) {
  const status = Object.keys(errors).length > 0 ? 422 : 200;
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
        ${keyFields(dash, values, errors, { creating: true })}
        <div class="actions"><button type="submit" class="button primary">Create key</button> <a href="${dash.path('/')}">Cancel</a></div>
      </form>`,
    },
    status,
  );
}

/** `GET /keys/new` (the form) and `POST /keys` (create, then show the key once). */
export function registerCreate(app: Hono<DashEnv>, dash: Dash): void {
  app.get('/keys/new', (c) => createForm(c, dash, EMPTY, {}));

  app.post('/keys', async (c) => {
    const values = readKeyForm(c.get('form'), !!dash.catalogue);
    const { errors, input } = validateKeyForm(values, { now: dash.clock(), creating: true });
    if (Object.keys(errors).length > 0) return createForm(c, dash, values, errors);
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
      created = await dash.manager.create(create);
    } catch (err) {
      // A rule the manager enforces that the form did not check first: still the form, still 422.
      const fieldError = fieldErrorOf(err);
      if (!fieldError) throw err;
      return createForm(c, dash, values, fieldError);
    }
    return newKeyPage(c, dash, created);
  });
}
