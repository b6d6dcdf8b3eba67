// A form that makes a key (create, rotate) carries a one-time token: sent again (a reload of "Key
// created" or "Key rotated", a double click), it makes nothing, and the answer never holds a secret.
import { KeyStoreUnavailableError } from 'keygate';
import { describe, expect, it } from 'vitest';
import { BASE, Client, csrfOf, onceOf, setup } from './support.js';

const SECRET_SHAPE = /mk_(live|test)_[A-Za-z0-9]{38}/;

async function signedIn() {
  const s = setup();
  return { ...s, client: await new Client(s.ui).signIn() };
}

/** The body a browser posts from the page at `path`, ready to be sent as many times as a test likes. */
async function formFrom(client: Client, path: string, fields: Record<string, string>) {
  const html = await (await client.get(path)).text();
  return { _csrf: csrfOf(html), _once: onceOf(html) ?? '', ...fields };
}

function send(client: Client, path: string, form: Record<string, string>) {
  return client.request(path, {
    method: 'POST',
    form,
    headers: { origin: 'http://dash.test', 'sec-fetch-site': 'same-origin' },
  });
}

describe('creating a key', () => {
  it('the same POST sent twice creates exactly one key; the second answer links it and holds no secret', async () => {
    const s = await signedIn();
    const form = await formFrom(s.client, `${BASE}/keys/new`, { name: 'ci', mode: 'live' });
    const first = await send(s.client, `${BASE}/keys`, form);
    expect(first.status).toBe(201);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('location')).toBeNull();
    expect(await first.text()).toMatch(SECRET_SHAPE);

    const again = await send(s.client, `${BASE}/keys`, form);
    const keys = await s.keys.list('acct_1');
    expect(keys).toHaveLength(1);
    expect(again.status).toBe(409);
    const html = await again.text();
    expect(html).toContain('<h1>Key already created</h1>');
    expect(html).toContain('Its secret was shown once and is not shown again.');
    expect(html).toContain(`<a href="${BASE}/keys/${keys[0]?.id}">Go to the key's page</a>`);
    expect(html).not.toMatch(SECRET_SHAPE);
    expect(html).not.toContain('id="new-api-key"');
  });

  it('of two identical POSTs at once, exactly one creates a key', async () => {
    const s = await signedIn();
    const form = await formFrom(s.client, `${BASE}/keys/new`, { name: 'double click', mode: 'test' });
    const answers = await Promise.all([send(s.client, `${BASE}/keys`, form), send(s.client, `${BASE}/keys`, form)]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(await s.keys.list('acct_1')).toHaveLength(1);
  });

  it('each render of the form carries its own token: a second form creates a second key', async () => {
    const s = await signedIn();
    for (const name of ['one', 'two']) {
      const form = await formFrom(s.client, `${BASE}/keys/new`, { name, mode: 'test' });
      expect((await send(s.client, `${BASE}/keys`, form)).status).toBe(201);
    }
    expect((await s.keys.list('acct_1')).map((k) => k.name).sort()).toEqual(['one', 'two']);
  });

  it('a refused form (422) spends no token: corrected, the same token creates the key', async () => {
    const s = await signedIn();
    const form = await formFrom(s.client, `${BASE}/keys/new`, { name: '', mode: 'test' });
    expect((await send(s.client, `${BASE}/keys`, form)).status).toBe(422);
    expect((await send(s.client, `${BASE}/keys`, { ...form, name: 'fixed' })).status).toBe(201);
    expect(await s.keys.list('acct_1')).toHaveLength(1);
  });

  it('when the first sending failed, sending it again says nothing was created and offers the form', async () => {
    const s = await signedIn();
    const create = s.keys.create.bind(s.keys);
    s.keys.create = async () => {
      s.keys.create = create;
      throw new KeyStoreUnavailableError('down', new Error('ECONNREFUSED'));
    };
    const form = await formFrom(s.client, `${BASE}/keys/new`, { name: 'ci', mode: 'test' });
    expect((await send(s.client, `${BASE}/keys`, form)).status).toBe(503);
    const again = await send(s.client, `${BASE}/keys`, form);
    expect(again.status).toBe(409);
    const html = await again.text();
    expect(html).toContain('<h1>Form already sent</h1>');
    expect(html).toContain('Nothing new was created.');
    expect(html).toContain(`<a href="${BASE}/keys/new">Open the form again</a>`);
    expect(await s.keys.list('acct_1')).toEqual([]);
  });

  it.each([
    ['no token', async () => ''],
    ['a malformed token', async () => 'abc.def.ghi'],
    [
      "another session's token",
      async (s: Awaited<ReturnType<typeof signedIn>>) =>
        onceOf(await (await (await new Client(s.ui).signIn()).get(`${BASE}/keys/new`)).text()) ?? '',
    ],
    [
      "a rotate form's token",
      async (s: Awaited<ReturnType<typeof signedIn>>) => {
        const { key } = await s.keys.create({ accountId: 'acct_1', name: 'other', mode: 'test' });
        return onceOf(await (await s.client.get(`${BASE}/keys/${key.id}`)).text()) ?? '';
      },
    ],
  ])('with %s creates nothing (400)', async (_, tokenOf) => {
    const s = await signedIn();
    const form = await formFrom(s.client, `${BASE}/keys/new`, { name: 'ci', mode: 'test' });
    const response = await send(s.client, `${BASE}/keys`, { ...form, _once: await tokenOf(s) });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('Nothing was created.');
    expect((await s.keys.list('acct_1')).filter((k) => k.name === 'ci')).toEqual([]);
  });
});

describe('rotating a key', () => {
  it('the same POST sent twice makes exactly one successor; the second answer links it and holds no secret', async () => {
    const s = await signedIn();
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'api', mode: 'live' });
    const form = await formFrom(s.client, `${BASE}/keys/${key.id}`, {});
    const first = await send(s.client, `${BASE}/keys/${key.id}/rotate`, form);
    expect(first.status).toBe(201);
    expect(await first.text()).toMatch(SECRET_SHAPE);

    const again = await send(s.client, `${BASE}/keys/${key.id}/rotate`, form);
    expect(await s.keys.list('acct_1')).toHaveLength(2);
    const next = (await s.keys.get(key.id))?.rotatedTo as string;
    expect(again.status).toBe(409);
    const html = await again.text();
    expect(html).toContain('<h1>Key already rotated</h1>');
    expect(html).toContain('The new key was shown once and is not shown again.');
    expect(html).toContain(`<a href="${BASE}/keys/${next}">Go to the new key's page</a>`);
    expect(html).not.toMatch(SECRET_SHAPE);
  });

  it("a rotate form's token works for its own key only", async () => {
    const s = await signedIn();
    const { key: a } = await s.keys.create({ accountId: 'acct_1', name: 'a', mode: 'test' });
    const { key: b } = await s.keys.create({ accountId: 'acct_1', name: 'b', mode: 'test' });
    const formOfA = await formFrom(s.client, `${BASE}/keys/${a.id}`, {});
    expect((await send(s.client, `${BASE}/keys/${b.id}/rotate`, formOfA)).status).toBe(400);
    expect(await s.keys.list('acct_1')).toHaveLength(2);
  });
});
