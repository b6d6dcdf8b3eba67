// Every value a user typed is escaped: key names, permissions, a typed confirmation, filter text,
// account ids and the host's account panel.
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

const NASTY = `"><script>alert(1)</script><img src=x onerror=alert(2)>'`;

function expectEscaped(html: string) {
  expect(html).not.toContain('<script>alert(1)');
  expect(html).not.toContain('<img src=x');
  expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
}

describe('escaping', () => {
  it.each([
    ['the list', (_id: string) => '/'],
    ['the key page', (id: string) => `/keys/${id}`],
    ['the revoke confirmation', (id: string) => `/keys/${id}/revoke`],
    ['the filter', (_: string) => `/?q=${encodeURIComponent(NASTY)}`],
  ])('of a key name on %s', async (_, path) => {
    const s = setup({ permissions: undefined });
    const client = await new Client(s.ui).signIn();
    const { key } = await s.keys.create({ accountId: 'acct_1', name: NASTY, mode: 'test', metadata: {} });
    const html = await (await client.get(`${BASE}${path(key.id)}`)).text();
    expectEscaped(html);
  });

  it('of typed form input re-rendered with 422', async () => {
    const s = setup({ permissions: undefined });
    const client = await new Client(s.ui).signIn();
    const response = await client.post(`${BASE}/keys`, {
      name: NASTY,
      mode: 'test',
      permissionsText: NASTY,
      allowedIps: NASTY,
    });
    expect(response.status).toBe(422);
    expectEscaped(await response.text());
  });

  it('of a wrong typed confirmation', async () => {
    const s = setup();
    const client = await new Client(s.ui).signIn();
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'k', mode: 'test' });
    const response = await client.post(`${BASE}/keys/${key.id}/revoke`, { confirm: NASTY });
    expect(response.status).toBe(422);
    expectEscaped(await response.text());
  });

  it('of the account id and the account panel', async () => {
    const s = setup({ accountPanel: () => [{ label: NASTY, value: NASTY }] });
    const client = await new Client(s.ui).signIn(NASTY);
    const html = await (await client.get(`${BASE}/`)).text();
    expectEscaped(html);
    expect(html.match(/&lt;script&gt;alert\(1\)/g)?.length).toBeGreaterThanOrEqual(3);
  });
});
