// One-time sign-in links and sessions, without a browser: the link is signed with the secret,
// valid 15 minutes, usable once; sessions end when idle, when old, and when signed out.
import { InvalidInputError, KeyManager, MemoryKeyStore } from 'keygate';
import { createSignInLink, dashboard, MemoryDashboardStore } from 'keygate/dashboard';
import { describe, expect, it } from 'vitest';
import { BASE, Client, ORIGIN, SECRET, setup } from './support.js';

const sessionCookie = (response: Response) =>
  response.headers.getSetCookie().find((line) => line.startsWith('keygate_session='));

describe('the dashboard secret', () => {
  it.each([
    ['a 31-byte string', 'x'.repeat(31)],
    ['an empty string', ''],
    ['a number', 12345],
    ['missing', undefined],
    ['31 bytes', new Uint8Array(31)],
  ])('is refused when it is %s (InvalidInputError, field secret)', (_, secret) => {
    const manager = new KeyManager({ store: new MemoryKeyStore() });
    const make = () => dashboard({ manager, secret: secret as string });
    expect(make).toThrow(InvalidInputError);
    expect(make).toThrow(expect.objectContaining({ code: 'invalid_input', field: 'secret' }));
  });

  it('is accepted at 32 bytes, as a string or bytes', () => {
    const manager = new KeyManager({ store: new MemoryKeyStore() });
    expect(() => dashboard({ manager, secret: 'x'.repeat(32) })).not.toThrow();
    expect(() => dashboard({ manager, secret: crypto.getRandomValues(new Uint8Array(32)) })).not.toThrow();
  });

  it('createSignInLink refuses a short secret the same way', async () => {
    await expect(createSignInLink({ secret: 'short', accountId: 'a', baseUrl: ORIGIN })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'secret',
    });
  });
});

describe('a sign-in link', () => {
  it('signs in once: 303 to the list with an HttpOnly, SameSite=Lax session cookie scoped to the base path', async () => {
    const { ui } = setup();
    const link = await ui.signInLink({ accountId: 'acct_1', baseUrl: ORIGIN });
    expect(link).toMatch(/^http:\/\/dash\.test\/dashboard\/sign-in\?token=[A-Za-z0-9_.-]+$/);
    const client = new Client(ui);
    const first = await client.get(link);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(`${BASE}/`);
    const cookie = sessionCookie(first) ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/dashboard(;|$)/);
    expect(cookie).not.toMatch(/Secure/);
    const list = await client.get(`${BASE}/`);
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('<h1>API keys</h1>');

    const again = await new Client(ui).get(link);
    expect(again.status).toBe(401);
    expect(sessionCookie(again)).toBeUndefined();
  });

  it('sets a Secure cookie over https', async () => {
    const { ui } = setup();
    const link = await ui.signInLink({ accountId: 'acct_1', baseUrl: 'https://dash.test' });
    const response = await ui.fetch(new Request(link));
    expect(sessionCookie(response)).toMatch(/; Secure/);
  });

  it('made by createSignInLink with the secret alone (no store) works once', async () => {
    const { ui, clock } = setup();
    const link = await createSignInLink({
      secret: SECRET,
      accountId: 'acct_9',
      baseUrl: ORIGIN,
      basePath: BASE,
      clock,
    });
    const client = new Client(ui);
    expect((await client.get(link)).status).toBe(303);
    expect(await (await client.get(`${BASE}/`)).text()).toContain('acct_9');
    expect((await new Client(ui).get(link)).status).toBe(401);
  });

  it('is single use across dashboards sharing a dashboard store', async () => {
    const keyStore = new MemoryKeyStore();
    const store = new MemoryDashboardStore(keyStore);
    const a = setup({ keyStore, store });
    const b = setup({ keyStore, store });
    const link = await a.ui.signInLink({ accountId: 'acct_1', baseUrl: ORIGIN });
    expect((await new Client(b.ui).get(link)).status).toBe(303);
    expect((await new Client(a.ui).get(link)).status).toBe(401);
  });

  it('is single use across dashboards over one MemoryKeyStore left to their default store', async () => {
    const keyStore = new MemoryKeyStore();
    const a = setup({ keyStore });
    const b = setup({ keyStore });
    const link = await a.ui.signInLink({ accountId: 'acct_1', baseUrl: ORIGIN });
    expect((await new Client(b.ui).get(link)).status).toBe(303);
    expect((await new Client(a.ui).get(link)).status).toBe(401);
  });

  it('of two concurrent redemptions lets exactly one in', async () => {
    const { ui } = setup();
    const link = await ui.signInLink({ accountId: 'acct_1', baseUrl: ORIGIN });
    const answers = await Promise.all(Array.from({ length: 5 }, () => new Client(ui).get(link)));
    expect(answers.map((r) => r.status).sort()).toEqual([303, 401, 401, 401, 401]);
  });

  it('expires after 15 minutes: 401, no cookie', async () => {
    const { ui, clock } = setup();
    const link = await ui.signInLink({ accountId: 'acct_1', baseUrl: ORIGIN });
    clock.advance(15 * 60_000 + 1);
    const response = await new Client(ui).get(link);
    expect(response.status).toBe(401);
    expect(sessionCookie(response)).toBeUndefined();
  });

  it.each([
    ['a made-up token', 'abc.def'],
    ['an empty token', ''],
    ['a token signed with another secret', 'other'],
    ['a tampered account', 'tamper'],
  ])('with %s gets 401 and no cookie', async (_, kind) => {
    const { ui } = setup();
    let token = kind;
    if (kind === 'other' || kind === 'tamper') {
      const link = await createSignInLink({
        secret: kind === 'other' ? 'another-secret-of-at-least-32-bytes' : SECRET,
        accountId: 'acct_1',
        baseUrl: ORIGIN,
      });
      token = new URL(link).searchParams.get('token') ?? '';
      if (kind === 'tamper') {
        const [payload, mac] = token.split('.');
        const claims = JSON.parse(atob((payload ?? '').replaceAll('-', '+').replaceAll('_', '/')));
        const forged = btoa(JSON.stringify({ ...claims, a: 'acct_2' })).replace(/=+$/, '');
        token = `${forged.replaceAll('+', '-').replaceAll('/', '_')}.${mac}`;
      }
    }
    const response = await new Client(ui).get(`${BASE}/sign-in?token=${encodeURIComponent(token)}`);
    expect(response.status).toBe(401);
    expect(sessionCookie(response)).toBeUndefined();
  });

  it('rejects a baseUrl with a path, naming the field', async () => {
    const { ui } = setup();
    await expect(ui.signInLink({ accountId: 'acct_1', baseUrl: 'http://x.test/dashboard' })).rejects.toMatchObject({
      field: 'baseUrl',
    });
    await expect(ui.signInLink({ accountId: '', baseUrl: ORIGIN })).rejects.toMatchObject({ field: 'accountId' });
  });
});

describe('sign-in throttling', () => {
  const from = (ip: string) => () => ip;

  it('allows 10 failed links from one address in 15 minutes, and a valid link after them', async () => {
    const { ui } = setup({ clientIp: from('203.0.113.7') });
    for (let i = 0; i < 10; i++) {
      expect((await new Client(ui).get(`${BASE}/sign-in?token=bad${i}`)).status).toBe(401);
    }
    expect((await new Client(ui).signIn()).cookies.has('keygate_session')).toBe(true);
  });

  it('answers 429 with Retry-After once an address keeps failing, even with a valid link; others are not affected', async () => {
    const ip = { current: '203.0.113.7' };
    const { ui } = setup({ clientIp: () => ip.current });
    let status = 401;
    for (let i = 0; i < 100 && status === 401; i++)
      status = (await new Client(ui).get(`${BASE}/sign-in?token=x${i}`)).status;
    expect(status).toBe(429);
    const link = await ui.signInLink({ accountId: 'acct_1', baseUrl: ORIGIN });
    const refused = await new Client(ui).get(link);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    ip.current = '198.51.100.1';
    expect((await new Client(ui).get(link)).status).toBe(303);
  });
});

describe('a session', () => {
  it('without one, a page redirects (303) to the sign-in page and a POST gets 401', async () => {
    const { ui } = setup();
    const client = new Client(ui);
    const page = await client.get(`${BASE}/keys/new`);
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(`${BASE}/sign-in`);
    const post = await client.request(`${BASE}/keys`, { method: 'POST', form: { name: 'x', mode: 'test' } });
    expect(post.status).toBe(401);
    const signIn = await client.get(`${BASE}/sign-in`);
    expect(signIn.status).toBe(200);
    expect(await signIn.text()).toContain('<h1>Sign in</h1>');
  });

  it('ends after an hour without a request, and stays alive while used', async () => {
    const { ui, clock } = setup();
    const client = await new Client(ui).signIn();
    for (let i = 0; i < 5; i++) {
      clock.advance(50 * 60_000);
      expect((await client.get(`${BASE}/`)).status).toBe(200);
    }
    clock.advance(60 * 60_000 + 1);
    expect((await client.get(`${BASE}/`)).status).toBe(303);
  });

  it('ends 12 hours after sign-in however busy', async () => {
    const { ui, clock } = setup();
    const client = await new Client(ui).signIn();
    for (let i = 0; i < 23; i++) {
      clock.advance(30 * 60_000);
      expect((await client.get(`${BASE}/`)).status).toBe(200);
    }
    clock.advance(31 * 60_000);
    expect((await client.get(`${BASE}/`)).status).toBe(303);
  });

  it('honours configured idle and absolute times', async () => {
    const { ui, clock } = setup({ sessionIdleMs: 60_000, sessionAbsoluteMs: 120_000 });
    const client = await new Client(ui).signIn();
    clock.advance(61_000);
    expect((await client.get(`${BASE}/`)).status).toBe(303);
  });

  it('signing out ends it everywhere: the old cookie no longer works', async () => {
    const { ui } = setup();
    const client = await new Client(ui).signIn();
    const stolen = new Map(client.cookies);
    const out = await client.post(`${BASE}/sign-out`, {});
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe(`${BASE}/sign-in?done=signed-out`);
    expect(client.cookies.has('keygate_session')).toBe(false);
    const replay = new Client(ui);
    for (const [k, v] of stolen) replay.cookies.set(k, v);
    expect((await replay.get(`${BASE}/`)).status).toBe(303);
  });

  it('a forged or altered cookie is no session', async () => {
    const { ui } = setup();
    const client = await new Client(ui).signIn();
    const value = client.cookies.get('keygate_session') ?? '';
    client.cookies.set('keygate_session', `${value.slice(0, -2)}AA`);
    expect((await client.get(`${BASE}/`)).status).toBe(303);
  });
});

describe('resolveAccount (the host login)', () => {
  it('names the account without a link; null falls back to link sessions', async () => {
    const { ui, keys } = setup({
      resolveAccount: (request) => (request.headers.get('x-user') === 'alice' ? 'acct_alice' : null),
    });
    await keys.create({ accountId: 'acct_alice', name: 'alice-key', mode: 'test' });
    const alice = new Client(ui);
    const page = await alice.get(`${BASE}/`, { 'x-user': 'alice' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('alice-key');
    expect((await new Client(ui).get(`${BASE}/`)).status).toBe(303);
  });

  it('binds CSRF tokens to a cookie of the browser and the account', async () => {
    const { ui, keys } = setup({ resolveAccount: () => 'acct_host' });
    const client = new Client(ui);
    const csrf = await client.csrf();
    expect(client.cookies.has('keygate_csrf')).toBe(true);
    const created = await client.post(`${BASE}/keys`, { _csrf: csrf, name: 'host-made', mode: 'test' });
    expect(created.status).toBe(201);
    expect((await keys.list('acct_host')).map((k) => k.name)).toEqual(['host-made']);
    const other = new Client(ui);
    const refused = await other.post(`${BASE}/keys`, { _csrf: csrf, name: 'forged', mode: 'test' });
    expect(refused.status).toBe(403);
  });
});
