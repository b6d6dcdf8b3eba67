// The pages and their flows, without a browser: list (pagination, filter, sparklines, rotation
// due), key page (usage chart and table, denials, last use), rotation status, errors.
import { KeyManager, KeyStoreUnavailableError, MemoryKeyStore } from 'keygate';
import { CAPABILITIES, utcDay } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

const DAY = 86_400_000;

async function signedIn(options: Parameters<typeof setup>[0] = {}) {
  const s = setup(options);
  return { ...s, client: await new Client(s.ui).signIn() };
}

const rowsOf = (html: string) =>
  [...html.matchAll(/<th scope="row"><a href="[^"]+">([^<]+)<\/a><\/th>/g)].map((m) => m[1]);

describe('the key list', () => {
  it('pages 50 keys at a time, newest first, and filters by name', async () => {
    const s = await signedIn();
    for (let i = 0; i < 120; i++) {
      await s.keys.create({
        accountId: 'acct_1',
        name: `${i % 2 ? 'web' : 'batch'}-${String(i).padStart(3, '0')}`,
        mode: 'test',
      });
      s.clock.advance(1000);
    }
    const first = await (await s.client.get(`${BASE}/`)).text();
    expect(rowsOf(first)).toHaveLength(50);
    expect(rowsOf(first)[0]).toBe('web-119');
    expect(first).toContain('Page 1 of 3');
    expect(first).toContain('120 keys.');
    const third = await (await s.client.get(`${BASE}/?page=3`)).text();
    expect(rowsOf(third)).toHaveLength(20);
    expect(rowsOf(third).at(-1)).toBe('batch-000');
    const filtered = await (await s.client.get(`${BASE}/?q=WEB-1`)).text();
    expect(rowsOf(filtered)).toEqual(
      Array.from({ length: 10 }, (_, i) => `web-1${String(19 - 2 * i).padStart(2, '0')}`),
    );
    expect(filtered).toContain('10 keys match “WEB-1”.');
    expect(filtered).not.toContain('Page 1 of');
    const beyond = await s.client.get(`${BASE}/?page=99`);
    expect(rowsOf(await beyond.text())).toHaveLength(20);
  });

  it('shows mode, hint, status, created, last used, a 30-day sparkline and rotation due', async () => {
    const s = await signedIn();
    const old = await s.keys.create({ accountId: 'acct_1', name: 'old', mode: 'live' });
    s.clock.advance(91 * DAY);
    await s.client.signIn(); // the first session ended long ago
    const fresh = await s.keys.create({ accountId: 'acct_1', name: 'fresh', mode: 'test' });
    const today = utcDay(s.clock());
    await s.store.addUsage({
      counts: [
        { keyId: fresh.key.id, accountId: 'acct_1', day: today, outcome: 'allowed', count: 1200 },
        { keyId: fresh.key.id, accountId: 'acct_1', day: today, outcome: 'ip_not_allowed', count: 34 },
      ],
      activity: [{ keyId: fresh.key.id, lastUsedAt: new Date(s.clock()).toISOString(), lastUsedIp: '203.0.113.9' }],
    });
    const html = await (await s.client.get(`${BASE}/`)).text();
    expect(html).toContain('<caption class="visually-hidden">API keys</caption>');
    expect(html).toContain('1,234 requests in the last 30 days');
    expect(html).toContain('No requests in the last 30 days');
    expect(html).toContain(fresh.key.hint);
    expect(html).toContain(old.key.hint);
    const oldRow = html.slice(html.indexOf('>old</a>'), html.indexOf('</tr>', html.indexOf('>old</a>')));
    expect(oldRow).toContain('<td>live</td>');
    expect(oldRow).toContain('<td>active</td>');
    expect(oldRow).toContain('badge-warn">due</span>');
    const freshRow = html.slice(html.indexOf('>fresh</a>'), html.indexOf('</tr>', html.indexOf('>fresh</a>')));
    expect(freshRow).not.toContain('>due<');
    expect(freshRow).toContain(`${today} `);
    expect(html).toContain('href="/dashboard/keys/new">Create key</a>');
  });

  it('shows the account panel the host provides', async () => {
    const s = await signedIn({
      accountPanel: (account) => [{ label: 'Credit balance', value: `€12.50 for ${account}` }],
    });
    const html = await (await s.client.get(`${BASE}/`)).text();
    expect(html).toContain('<dt>Credit balance</dt><dd>€12.50 for acct_1</dd>');
    expect(html).toContain('aria-labelledby="account-title"');
    expect(html).toContain('<h2 id="account-title">Account</h2>');
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('ledger down');
      },
    ],
    ['rejects', () => Promise.reject(new Error('ledger down'))],
    ['returns no list', () => ({ label: 'Credit balance', value: 1 }) as never],
    ['returns a list with a hole', () => [null] as never],
  ])(
    'when the account panel %s, the list still answers 200 with a short "unavailable" note',
    async (_, accountPanel) => {
      const errors: unknown[] = [];
      const s = await signedIn({ accountPanel, onError: (err) => void errors.push(err) });
      await s.keys.create({ accountId: 'acct_1', name: 'still listed', mode: 'test' });
      const response = await s.client.get(`${BASE}/`);
      expect(response.status).toBe(200);
      const html = await response.text();
      expect(html).toContain('<h2 id="account-title">Account</h2>');
      expect(html).toContain('Account details are unavailable right now.');
      expect(html).not.toContain('ledger down');
      expect(rowsOf(html)).toEqual(['still listed']);
      expect(errors).toHaveLength(1);
    },
  );

  it('shows no account section when the panel has no entries', async () => {
    const s = await signedIn({ accountPanel: async () => [] });
    const html = await (await s.client.get(`${BASE}/`)).text();
    expect(html).not.toContain('account-title');
  });

  it("works with a store that has none of the dashboard's read methods (per-key reads, paging in memory)", async () => {
    const inner = new MemoryKeyStore();
    const store = Object.assign(Object.create(inner), {
      getDailyTotalsOfKeys: undefined,
      getActivityOfKeys: undefined,
      listKeysPage: undefined,
    });
    const clock = () => Date.now();
    let now = Date.now() - 1000_000;
    const manager = new KeyManager({ store, clock: () => now });
    const s = await signedIn({ manager, store, clock });
    let id = '';
    for (let i = 0; i < 55; i++) {
      id = (await manager.create({ accountId: 'acct_1', name: `k${i}`, mode: 'test' })).key.id;
      now += 1000;
    }
    await inner.addUsage({
      counts: [{ keyId: id, accountId: 'acct_1', day: utcDay(Date.now()), outcome: 'allowed', count: 7 }],
      activity: [],
    });
    const first = await (await s.client.get(`${BASE}/`)).text();
    expect(first).toContain('7 requests in the last 30 days');
    expect(rowsOf(first)).toHaveLength(50);
    expect(rowsOf(first)[0]).toBe('k54');
    expect(rowsOf(await (await s.client.get(`${BASE}/?page=2`)).text())).toEqual(['k4', 'k3', 'k2', 'k1', 'k0']);
    expect(rowsOf(await (await s.client.get(`${BASE}/?q=K5`)).text())).toEqual([
      'k54',
      'k53',
      'k52',
      'k51',
      'k50',
      'k5',
    ]);
  });
});

describe('the key page', () => {
  it('has the settings form, a usage chart stating the totals, the usage table, denials by reason and the last use', async () => {
    const s = await signedIn();
    const { key } = await s.keys.create({
      accountId: 'acct_1',
      name: 'billing',
      mode: 'live',
      permissions: ['email:verify'],
    });
    const now = s.clock();
    const day = (n: number) => utcDay(now - n * DAY);
    await s.store.addUsage({
      counts: [
        { keyId: key.id, accountId: 'acct_1', day: day(0), outcome: 'allowed', count: 900 },
        { keyId: key.id, accountId: 'acct_1', day: day(3), outcome: 'allowed', count: 100 },
        { keyId: key.id, accountId: 'acct_1', day: day(3), outcome: 'insufficient_permissions', count: 5 },
        { keyId: key.id, accountId: 'acct_1', day: day(40), outcome: 'allowed', count: 99_999 },
      ],
      activity: [{ keyId: key.id, lastUsedAt: new Date(now).toISOString(), lastUsedIp: '198.51.100.4' }],
    });
    const html = await (await s.client.get(`${BASE}/keys/${key.id}`)).text();
    expect(html.match(/<h1>/g)).toHaveLength(1);
    expect(html).toContain('<h1>billing</h1>');
    expect(html).toContain('aria-label="Requests per day over the last 30 days: 1,000 allowed, 5 denied"');
    expect(html).toMatch(/<svg class="chart" role="img"/);
    expect(html).toContain('<caption>Usage by day</caption>');
    expect(html).toContain(`<th scope="row">${day(3)}</th><td class="num">100</td><td class="num">5</td>`);
    expect(html).toContain('Insufficient permissions <code>insufficient_permissions</code>');
    expect(html).toContain('from <code>198.51.100.4</code>');
    for (const name of ['Save changes', 'Rotate key', 'Revoke key']) expect(html).toContain(`>${name}</button>`);
    expect(html).toMatch(/id="permission-0" name="permissions" value="email:verify" checked/);
  });

  it('says so when the store keeps no usage statistics', async () => {
    const inner = new MemoryKeyStore();
    const store = Object.assign(Object.create(inner), {
      [CAPABILITIES]: {},
      addUsage: undefined,
      getUsage: undefined,
      getActivity: undefined,
      getDailyTotalsOfKeys: undefined,
      getActivityOfKeys: undefined,
    });
    const manager = new KeyManager({ store });
    const s = await signedIn({ manager, store });
    const { key } = await manager.create({ accountId: 'acct_1', name: 'k', mode: 'test' });
    const response = await s.client.get(`${BASE}/keys/${key.id}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('This key store keeps no usage statistics.');
    expect((await s.client.get(`${BASE}/`)).status).toBe(200);
  });

  it('a store outage is 503 with Retry-After, not a stack trace', async () => {
    const store = new MemoryKeyStore();
    const s = await signedIn({ store });
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'k', mode: 'test' });
    store.findById = async () => {
      throw new KeyStoreUnavailableError('down', new Error('ECONNREFUSED'));
    };
    const response = await s.client.get(`${BASE}/keys/${key.id}`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.text()).not.toContain('ECONNREFUSED');
  });

  it('an unexpected error is a plain 500 page, reported to onError', async () => {
    const errors: unknown[] = [];
    const store = new MemoryKeyStore();
    const s = await signedIn({ store, onError: (err) => errors.push(err) });
    store.listByAccount = async () => {
      throw new Error('secret internals');
    };
    const response = await s.client.get(`${BASE}/`);
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('secret internals');
    expect(errors).toHaveLength(1);
  });
});

describe('rotation', () => {
  it('shows the new key once, then the status; "Revoke old key" is enabled once the new key is seen and the old one quiet', async () => {
    const s = await signedIn();
    const { key: old } = await s.keys.create({
      accountId: 'acct_1',
      name: 'api',
      mode: 'live',
      permissions: ['email:find'],
    });
    const rotated = await s.client.post(`${BASE}/keys/${old.id}/rotate`, {});
    expect(rotated.status).toBe(201);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    expect(await rotated.text()).toMatch(/id="new-api-key"[^>]*value="mk_live_/);
    const next = (await s.keys.get(old.id))?.rotatedTo as string;
    expect((await s.keys.get(next))?.permissions).toEqual(['email:find']);

    const page = async () => (await s.client.get(`${BASE}/keys/${old.id}`)).text();
    let html = await page();
    expect(html).toContain('<h2 id="rotation-title">Rotation</h2>');
    expect(html).toContain('<strong>New key seen:</strong> not yet');
    expect(html).toMatch(
      /<button type="submit" class="button danger" aria-describedby="finish-hint" disabled>Revoke old key<\/button>/,
    );
    expect(html).not.toContain('>Rotate key</button>');
    expect((await s.client.post(`${BASE}/keys/${old.id}/finish-rotation`, {})).status).toBe(409);
    expect((await s.keys.get(old.id))?.status).toBe('active');

    s.clock.advance(60_000);
    await s.store.addUsage({
      counts: [],
      activity: [{ keyId: next, lastUsedAt: new Date(s.clock()).toISOString(), lastUsedIp: '203.0.113.1' }],
    });
    html = await page();
    expect(html).toContain('<strong>New key seen:</strong> yes');
    expect(html).toContain('disabled>Revoke old key');
    s.clock.advance(15 * 60_000);
    html = await page();
    expect(html).toContain('<strong>Old key quiet:</strong> yes');
    expect(html).toMatch(/aria-describedby="finish-hint">Revoke old key/);
    const finished = await s.client.post(`${BASE}/keys/${old.id}/finish-rotation`, {});
    expect(finished.status).toBe(303);
    expect((await s.keys.get(old.id))?.status).toBe('revoked');
    expect((await s.keys.get(next))?.status).toBe('active');
  });

  it('rotating a key twice while its successor is active is 409', async () => {
    const s = await signedIn();
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'api', mode: 'test' });
    expect((await s.client.post(`${BASE}/keys/${key.id}/rotate`, {})).status).toBe(201);
    expect((await s.client.post(`${BASE}/keys/${key.id}/rotate`, {})).status).toBe(409);
    expect(await s.keys.list('acct_1')).toHaveLength(2);
  });
});

describe('paths', () => {
  it.each([
    ['/', '/keys/new', '/keys/new'],
    ['/dashboard', '/dashboard', '/'],
    ['/admin/keys/', '/admin/keys/keys/new', '/keys/new'],
  ])('basePath %s answers %s', async (basePath, path) => {
    const s = setup({ basePath });
    const client = new Client(s.ui);
    const link = await s.ui.signInLink({ accountId: 'a', baseUrl: 'http://dash.test' });
    const signIn = await client.get(link);
    expect(signIn.headers.get('location')).toBe(basePath === '/' ? '/' : `${basePath.replace(/\/$/, '')}/`);
    expect((await client.get(path)).status).toBe(200);
  });
});
