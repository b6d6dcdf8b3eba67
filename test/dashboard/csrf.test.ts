// Every state-changing request is a POST with the session's CSRF token, from the dashboard's own
// origin: refused with 403, nothing changed, otherwise.
import { describe, expect, it } from 'vitest';
import { BASE, Client, csrfOf, onceOf, setup } from './support.js';

async function withKey() {
  const s = setup();
  const client = await new Client(s.ui).signIn();
  const { key } = await s.keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test', allowedIps: ['10.0.0.0/8'] });
  return { ...s, client, key };
}

/** Every POST action of the dashboard, with a form that would change something. */
const ACTIONS = (id: string) =>
  [
    ['create', `${BASE}/keys`, { name: 'evil', mode: 'live' }],
    ['save', `${BASE}/keys/${id}`, { name: 'renamed', allowedIps: '', allowAny: 'on' }],
    ['rotate', `${BASE}/keys/${id}/rotate`, {}],
    ['suspend', `${BASE}/keys/${id}/suspend`, { reason: 'forged' }],
    ['revoke', `${BASE}/keys/${id}/revoke`, { confirm: 'ci' }],
    ['sign out', `${BASE}/sign-out`, {}],
  ] as const;

async function unchanged(s: Awaited<ReturnType<typeof withKey>>) {
  const keys = await s.keys.list('acct_1');
  expect(keys.map((k) => [k.name, k.status, k.allowedIps])).toEqual([['ci', 'active', ['10.0.0.0/8']]]);
  expect((await s.client.get(`${BASE}/`)).status).toBe(200); // still signed in
  expect(s.events).toHaveLength(1); // key.created of the setup only
}

describe.each(['create', 'save', 'rotate', 'suspend', 'revoke', 'sign out'])('%s', (name) => {
  const pick = (id: string) =>
    ACTIONS(id).find(([n]) => n === name) as readonly [string, string, Record<string, string>];

  it.each([
    ['no CSRF token', { _csrf: '' }, {}],
    ['a wrong CSRF token', { _csrf: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, {}],
    ['an Origin of another site', {}, { origin: 'https://evil.test' }],
    ['Sec-Fetch-Site: cross-site', {}, { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', {}, { 'sec-fetch-site': 'same-site' }],
  ])('is refused with 403 and changes nothing with %s', async (_, form, headers) => {
    const s = await withKey();
    const [, path, body] = pick(s.key.id);
    const response = await s.client.post(path, { ...body, ...form }, headers);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('Nothing was changed');
    await unchanged(s);
  });
});

describe('a token of another session', () => {
  it('is refused with 403', async () => {
    const s = await withKey();
    const other = await new Client(s.ui).signIn('acct_1');
    const foreign = await other.csrf();
    const response = await s.client.post(`${BASE}/keys`, { _csrf: foreign, name: 'x', mode: 'test' });
    expect(response.status).toBe(403);
    await unchanged(s);
  });
});

describe('what is allowed', () => {
  it.each([
    ['Origin: null (no-referrer forms)', { origin: 'null' }],
    ['no Origin and no Sec-Fetch-Site (older browsers)', { origin: '', 'sec-fetch-site': '' }],
    ['Sec-Fetch-Site: none (typed by the user)', { 'sec-fetch-site': 'none' }],
  ])('%s with the right token', async (_, headers) => {
    const s = await withKey();
    const send = new Headers(headers as Record<string, string>);
    const clean: Record<string, string> = {};
    for (const [k, v] of send) if (v !== '') clean[k] = v;
    const form = await (await s.client.get(`${BASE}/keys/new`)).text();
    const response = await s.client.request(`${BASE}/keys`, {
      method: 'POST',
      form: { _csrf: csrfOf(form), _once: onceOf(form) ?? '', name: 'made', mode: 'test' },
      headers: { 'sec-fetch-site': 'same-origin', ...clean },
    });
    expect(response.status).toBe(201);
  });

  it('a GET never changes anything: a GET to an action path is not an action', async () => {
    const s = await withKey();
    expect((await s.client.get(`${BASE}/keys/${s.key.id}/rotate`)).status).toBe(404);
    expect((await s.keys.list('acct_1')).length).toBe(1);
  });

  it('a form body over 64 KiB is refused', async () => {
    const s = await withKey();
    const response = await s.client.post(`${BASE}/keys`, { name: 'x'.repeat(70_000), mode: 'test' });
    expect(response.status).toBe(403);
  });
});
