// Another account's key is 404 for reading and for every action, with a valid CSRF token too, and
// the answer is byte for byte the one for a key that does not exist.
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

async function twoAccounts() {
  const s = setup();
  const mine = await s.keys.create({ accountId: 'acct_1', name: 'mine', mode: 'test' });
  const theirs = await s.keys.create({ accountId: 'acct_2', name: 'theirs', mode: 'live', allowedIps: ['10.0.0.0/8'] });
  const client = await new Client(s.ui).signIn('acct_1');
  return { ...s, client, mine: mine.key, theirs: theirs.key };
}

const MISSING = 'key_doesNotExist0000000';

describe.each([
  ['GET', 'the key page', (id: string) => `${BASE}/keys/${id}`, undefined],
  ['GET', 'the revoke confirmation', (id: string) => `${BASE}/keys/${id}/revoke`, undefined],
  ['POST', 'saving settings', (id: string) => `${BASE}/keys/${id}`, { name: 'stolen', allowedIps: '', allowAny: 'on' }],
  ['POST', 'rotating', (id: string) => `${BASE}/keys/${id}/rotate`, {}],
  ['POST', 'revoking', (id: string) => `${BASE}/keys/${id}/revoke`, { confirm: 'theirs' }],
  ['POST', 'finishing a rotation', (id: string) => `${BASE}/keys/${id}/finish-rotation`, {}],
] as const)('%s %s', (method, _, path, form) => {
  it("of another account's key is 404, the same bytes as for a missing key, and changes nothing", async () => {
    const s = await twoAccounts();
    const send = (id: string) => (method === 'GET' ? s.client.get(path(id)) : s.client.post(path(id), form ?? {}));
    const theirs = await send(s.theirs.id);
    const missing = await send(MISSING);
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    const strip = (h: Headers) => [...h].filter(([name]) => name !== 'set-cookie');
    expect(strip(theirs.headers)).toEqual(strip(missing.headers));
    expect(await theirs.text()).toBe(await missing.text());
    const after = await s.keys.get(s.theirs.id);
    expect(after).toMatchObject({ name: 'theirs', status: 'active', allowedIps: ['10.0.0.0/8'], rotatedTo: null });
    expect(s.events.filter((e) => e.accountId === 'acct_2').map((e) => e.type)).toEqual(['key.created']);
  });
});

describe('the key list', () => {
  it("shows the signed-in account's keys only", async () => {
    const s = await twoAccounts();
    const html = await (await s.client.get(`${BASE}/`)).text();
    expect(html).toContain('mine');
    expect(html).not.toContain('theirs');
    expect(html).not.toContain(s.theirs.id);
  });
});

describe('events', () => {
  it('every action through the dashboard emits its key.* event with the acting account', async () => {
    const s = await twoAccounts();
    const created = await s.client.post(`${BASE}/keys`, { name: 'new', mode: 'test' });
    expect(created.status).toBe(201);
    const id = (await s.keys.list('acct_1')).find((k) => k.name === 'new')?.id as string;
    await s.client.post(`${BASE}/keys/${id}`, { name: 'renamed', allowedIps: '' });
    await s.client.post(`${BASE}/keys/${id}/rotate`, {});
    await s.client.post(`${BASE}/keys/${id}/revoke`, { confirm: 'renamed' });
    const mine = s.events.filter((e) => e.keyId === id);
    expect(mine.map((e) => [e.type, e.accountId])).toEqual([
      ['key.created', 'acct_1'],
      ['key.updated', 'acct_1'],
      ['key.rotated', 'acct_1'],
      ['key.revoked', 'acct_1'],
    ]);
  });
});
