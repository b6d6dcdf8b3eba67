// Bad input re-renders the form with 422, the input kept and a message naming the bad entry;
// nothing is saved.
import { InvalidInputError, KeyManager, MemoryKeyStore } from 'keygate';
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

async function signedIn(options: Parameters<typeof setup>[0] = {}) {
  const s = setup(options);
  return { ...s, client: await new Client(s.ui).signIn() };
}

describe('the create form', () => {
  it.each([
    ['an unparseable allow-list entry', { allowedIps: '203.0.113.0/24\n10.0.0.300' }, 'Line 2', '10.0.0.300'],
    ['an allow-list entry with host bits', { allowedIps: '10.1.2.3/8' }, 'did you mean 10.0.0.0/8', '10.1.2.3/8'],
    ['an empty name', { name: '   ' }, 'Enter a name', ''],
    ['an unknown mode', { mode: 'prod' }, 'Choose test or live', ''],
    ['a past expiry', { expires: '2001-01-01' }, 'must lie in the future', '2001-01-01'],
    ['a bad expiry', { expires: 'soon' }, 'is not a date', 'soon'],
  ])('with %s answers 422 naming it, keeps the input and creates nothing', async (_, change, message, kept) => {
    const s = await signedIn();
    const form = { name: 'my key', mode: 'live', allowedIps: '', permissions: ['email:find'], ...change };
    const response = await s.client.post(`${BASE}/keys`, form);
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain(message);
    expect(html).toContain('aria-invalid="true"');
    expect(html).toContain(kept);
    expect(html).toMatch(/value="email:find" checked/);
    if (form.name.trim()) expect(html).toContain(`value="${form.name}"`);
    expect(await s.keys.list('acct_1')).toEqual([]);
    expect(s.events).toEqual([]);
  });

  it('creates the key with what was typed and shows the raw key once, no-store, in no URL', async () => {
    const s = await signedIn();
    const response = await s.client.post(`${BASE}/keys`, {
      name: 'production',
      mode: 'live',
      permissions: ['email:verify', 'email:find'],
      allowedIps: '203.0.113.0/24\n2001:DB8::/32\n',
      expires: '2999-01-01',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('location')).toBeNull();
    const html = await response.text();
    const secret = /id="new-api-key"[^>]*value="(mk_live_[A-Za-z0-9]+)"/.exec(html)?.[1] as string;
    expect(secret).toMatch(/^mk_live_/);
    expect(html).toContain('<label for="new-api-key" class="visually-hidden">New API key</label>');
    const [key] = await s.keys.list('acct_1');
    expect(key).toMatchObject({
      name: 'production',
      mode: 'live',
      permissions: ['email:verify', 'email:find'],
      allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
      expiresAt: '2999-01-01T00:00:00.000Z',
    });
    for (const path of ['/', `/keys/${key?.id}`]) {
      expect(await (await s.client.get(`${BASE}${path}`)).text()).not.toContain(secret);
    }
  });

  it('offers a permissions text field without a catalogue', async () => {
    const s = await signedIn({ permissions: undefined });
    const form = await (await s.client.get(`${BASE}/keys/new`)).text();
    expect(form).toContain('<label for="permissions">Permissions</label>');
    const bad = await s.client.post(`${BASE}/keys`, {
      name: 'k',
      mode: 'test',
      permissionsText: 'email:verify\nno spaces',
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('“no spaces” is not a permission name');
    const good = await s.client.post(`${BASE}/keys`, {
      name: 'k',
      mode: 'test',
      permissionsText: 'email:verify\nemail:score\n',
    });
    expect(good.status).toBe(201);
    expect((await s.keys.list('acct_1'))[0]?.permissions).toEqual(['email:verify', 'email:score']);
  });
});

describe('every problem at once', () => {
  it('names every bad allow-list line by its number, keeps the input, creates nothing', async () => {
    const s = await signedIn();
    const allowedIps = '203.0.113.0/24\n10.0.0.300\n2001:db8::/32\n10.1.2.3/8, fe80::1%eth0';
    const response = await s.client.post(`${BASE}/keys`, { name: 'k', mode: 'test', allowedIps });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain('Line 2: allow-list entry &quot;10.0.0.300&quot; is not an IPv4 address');
    expect(html).toContain(
      'Line 4: allow-list entry &quot;10.1.2.3/8&quot; has host bits set; did you mean 10.0.0.0/8?',
    );
    expect(html).toContain('Line 4: allow-list entry &quot;fe80::1%eth0&quot; has a zone id');
    expect(html).not.toContain('Line 1:');
    expect(html).not.toContain('Line 3:');
    expect(html).toContain('10.0.0.300\n2001:db8::/32\n10.1.2.3/8, fe80::1%eth0');
    expect(await s.keys.list('acct_1')).toEqual([]);
  });

  it('shows a message next to every bad field', async () => {
    const s = await signedIn({ permissions: undefined });
    const response = await s.client.post(`${BASE}/keys`, {
      name: '',
      mode: 'test',
      permissionsText: 'ok:one\nno spaces',
      allowedIps: 'nope',
      expires: '2001-01-01',
    });
    expect(response.status).toBe(422);
    const html = await response.text();
    for (const id of ['name', 'permissions', 'allowedIps', 'expires']) expect(html).toContain(`id="${id}-error"`);
  });
});

describe('a name that disguises itself', () => {
  it.each([
    ['a right-to-left override', 'invoice\u202efdp.exe', 'direction-changing'],
    ['a C1 control', 'ci\u009b31m', 'control'],
    ['only zero-width characters', '\u200b\u200d', 'at least one visible character'],
  ])('with %s is refused (422) on the create form, nothing created', async (_, name, message) => {
    const s = await signedIn();
    const response = await s.client.post(`${BASE}/keys`, { name, mode: 'test' });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain('id="name-error"');
    expect(html).toContain(message);
    expect(await s.keys.list('acct_1')).toEqual([]);
    expect(s.events).toEqual([]);
  });
});

describe('more permissions than a key holds', () => {
  it('are refused (422) naming the cap, nothing created', async () => {
    const s = await signedIn({ permissions: undefined });
    const permissionsText = Array.from({ length: 101 }, (_, i) => `email:scope${i}`).join('\n');
    const response = await s.client.post(`${BASE}/keys`, { name: 'k', mode: 'test', permissionsText });
    expect(response.status).toBe(422);
    expect(await response.text()).toContain('Choose at most 100 permissions');
    expect(await s.keys.list('acct_1')).toEqual([]);
  });
});

describe('a rule only the manager knows', () => {
  it('comes back as the form with 422 naming its field, not as an error page', async () => {
    const store = new MemoryKeyStore();
    const manager = new KeyManager({ store });
    manager.create = async () => {
      throw new InvalidInputError('rateLimit', 'rateLimit.limit must be at most 1000000');
    };
    const s = await signedIn({ manager, keyStore: store, rateLimits: true });
    const response = await s.client.post(`${BASE}/keys`, { name: 'k', mode: 'test', rateLimit: '9999999' });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain('rateLimit.limit must be at most 1000000');
    expect(html).toContain('id="rateLimit-error"');
  });
});

describe('the rate limit field', () => {
  it('is absent unless rate limits are turned on', async () => {
    const s = await signedIn();
    expect(await (await s.client.get(`${BASE}/keys/new`)).text()).not.toContain('Rate limit');
  });

  it('sends rateLimit { limit, windowMs } to create, null when empty, and 422 for a bad number', async () => {
    const store = new MemoryKeyStore();
    const manager = new KeyManager({ store });
    const inputs: unknown[] = [];
    const create = manager.create.bind(manager);
    manager.create = (input) => {
      inputs.push((input as { rateLimit?: unknown }).rateLimit);
      return create(input);
    };
    const s = await signedIn({ manager, keyStore: store, rateLimits: true });
    const form = await (await s.client.get(`${BASE}/keys/new`)).text();
    expect(form).toContain('<label for="rateLimit">Rate limit</label>');
    expect(
      (await s.client.post(`${BASE}/keys`, { name: 'a', mode: 'test', rateLimit: '100', rateLimitWindow: 'minute' }))
        .status,
    ).toBe(201);
    expect((await s.client.post(`${BASE}/keys`, { name: 'b', mode: 'test', rateLimit: '' })).status).toBe(201);
    const bad = await s.client.post(`${BASE}/keys`, {
      name: 'c',
      mode: 'test',
      rateLimit: '-5',
      rateLimitWindow: 'minute',
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('“-5” is not a whole number');
    expect(inputs).toEqual([{ limit: 100, windowMs: 60_000 }, null]);
  });
});

describe('the settings form', () => {
  async function withKey(allowedIps: string[]) {
    const s = await signedIn();
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test', allowedIps });
    return { ...s, key, url: `${BASE}/keys/${key.id}` };
  }

  it('refuses to clear a non-empty allow list without "Allow any address" (422, list kept)', async () => {
    const s = await withKey(['10.0.0.0/8']);
    const page = await (await s.client.get(s.url)).text();
    expect(page).toContain('<label for="allowAny">Allow any address</label>');
    const refused = await s.client.post(s.url, { name: 'ci', allowedIps: '' });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('tick “Allow any address”');
    expect((await s.keys.get(s.key.id))?.allowedIps).toEqual(['10.0.0.0/8']);
    const saved = await s.client.post(s.url, { name: 'ci', allowedIps: '', allowAny: 'on' });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(`${s.url}?done=saved`);
    expect((await s.keys.get(s.key.id))?.allowedIps).toEqual([]);
  });

  it('does not ask for it when the list was empty already', async () => {
    const s = await withKey([]);
    expect(await (await s.client.get(s.url)).text()).not.toContain('Allow any address');
    expect((await s.client.post(s.url, { name: 'renamed', allowedIps: '' })).status).toBe(303);
    expect((await s.keys.get(s.key.id))?.name).toBe('renamed');
  });

  it.each([
    ['an empty name', { name: '' } as Record<string, string>, 'Enter a name'],
    ['a bad allow-list entry', { allowedIps: '10.0.0.0/8\n2001:db8::g' }, 'Line 2'],
  ])('with %s answers 422, keeps the input, saves nothing', async (_, change, message) => {
    const s = await withKey(['10.0.0.0/8']);
    const response = await s.client.post(s.url, { name: 'ci', allowedIps: '10.0.0.0/8', ...change });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain(message);
    if (change.allowedIps) expect(html).toContain('2001:db8::g');
    expect(await s.keys.get(s.key.id)).toMatchObject({ name: 'ci', allowedIps: ['10.0.0.0/8'], version: 1 });
  });

  it('keeps an expiry it did not show changed', async () => {
    const s = await signedIn();
    const { key } = await s.keys.create({
      accountId: 'acct_1',
      name: 'ci',
      mode: 'test',
      expiresAt: '2999-05-05T12:34:56.000Z',
    });
    await s.client.post(`${BASE}/keys/${key.id}`, { name: 'ci2', allowedIps: '', expires: '2999-05-05' });
    expect(await s.keys.get(key.id)).toMatchObject({ name: 'ci2', expiresAt: '2999-05-05T12:34:56.000Z' });
  });

  it('a revoked key has no form, and a forced save is 409', async () => {
    const s = await withKey([]);
    await s.keys.revoke(s.key.id);
    const page = await (await s.client.get(s.url)).text();
    expect(page).not.toContain('Save changes');
    expect(page).toContain('revoked');
    expect((await s.client.post(s.url, { name: 'x', allowedIps: '' })).status).toBe(409);
  });
});

describe('revoking', () => {
  it('a wrong name revokes nothing (422); the right name revokes (303)', async () => {
    const s = await signedIn();
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    const url = `${BASE}/keys/${key.id}/revoke`;
    const page = await (await s.client.get(url)).text();
    expect(page).toContain('<label for="confirm">Type the key name to confirm</label>');
    expect(page).toContain('Revoke permanently');
    for (const wrong of ['', 'CI', 'c', 'ci ci']) {
      const response = await s.client.post(url, { confirm: wrong });
      expect(response.status).toBe(422);
      expect((await s.keys.get(key.id))?.status).toBe('active');
    }
    const done = await s.client.post(url, { confirm: 'ci' });
    expect(done.status).toBe(303);
    expect((await s.keys.get(key.id))?.status).toBe('revoked');
    expect((await s.client.post(url, { confirm: 'ci' })).status).toBe(409);
  });
});
