// Every response (pages, errors, redirects, assets) carries the security headers.
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

function expectSecurityHeaders(response: Response) {
  const csp = response.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toMatch(/script-src 'self'(;|$)/);
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
}

describe('security headers', () => {
  it.each([
    ['the list', 'GET', '/', 200],
    ['the create form', 'GET', '/keys/new', 200],
    ['a key page', 'GET', '/keys/:id', 200],
    ['a missing key', 'GET', '/keys/key_missing', 404],
    ['an unknown page', 'GET', '/nowhere', 404],
    ['the stylesheet', 'GET', '/assets/dashboard.css', 200],
    ['the script', 'GET', '/assets/dashboard.js', 200],
    ['a refused POST', 'POST', '/keys', 403],
    ['a created key', 'POST+', '/keys', 201],
    ['a redirect', 'POST+', '/sign-out', 303],
  ])('are on %s', async (_, method, path, status) => {
    const s = setup();
    const client = await new Client(s.ui).signIn();
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'k', mode: 'test' });
    const url = `${BASE}${path.replace(':id', key.id)}`;
    const response =
      method === 'GET'
        ? await client.get(url)
        : method === 'POST'
          ? await client.post(url, { _csrf: 'nope', name: 'x', mode: 'test' })
          : await client.post(url, { name: 'x', mode: 'test' });
    expect(response.status).toBe(status);
    expectSecurityHeaders(response);
  });

  it('are on the sign-in page, a bad link (401) and the redirect without a session', async () => {
    const { ui } = setup();
    const client = new Client(ui);
    for (const [path, status] of [
      ['/sign-in', 200],
      ['/sign-in?token=nope', 401],
      ['/', 303],
    ] as const) {
      const response = await client.get(`${BASE}${path}`);
      expect(response.status).toBe(status);
      expectSecurityHeaders(response);
    }
  });

  it('pages are never cached; the one page with a raw key says no-store', async () => {
    const s = setup();
    const client = await new Client(s.ui).signIn();
    expect((await client.get(`${BASE}/`)).headers.get('cache-control')).toBe('no-store');
    const created = await client.post(`${BASE}/keys`, { name: 'x', mode: 'test' });
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect((await client.get(`${BASE}/assets/dashboard.js`)).headers.get('cache-control')).toMatch(/max-age/);
  });

  it('the page refers only to its own script and stylesheet, and has no inline script or style', async () => {
    const s = setup();
    const client = await new Client(s.ui).signIn();
    await s.keys.create({ accountId: 'acct_1', name: 'k', mode: 'test' });
    const html = await (await client.get(`${BASE}/`)).text();
    expect(html).toContain(`<script src="${BASE}/assets/dashboard.js" defer></script>`);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
  });
});
