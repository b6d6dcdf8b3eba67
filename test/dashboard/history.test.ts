// The audit log in the dashboard: every change made there is recorded with actor `dashboard`, the
// signed-in account and the request's address; a sign-in too. A key's page shows its "History", the
// account has a history page, paged with "Older entries"; every value escaped, no script needed.
import { KeyManager, MemoryKeyStore } from 'keygate';
import { MemoryDashboardStore } from 'keygate/dashboard';
import { describe, expect, it } from 'vitest';
import { BASE, Client, keyStoreWithoutUsage, setup } from './support.js';

const ADDRESS = '203.0.113.7';

async function signedIn(options: Parameters<typeof setup>[0] = {}) {
  const s = setup({ clientIp: () => ADDRESS, ...options });
  return { ...s, client: await new Client(s.ui).signIn() };
}

/** The rows of the table captioned "History", each as its cells' text. */
function historyRows(page: string): string[][] {
  const table = /<caption>History<\/caption>([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
  const body = /<tbody>([\s\S]*)<\/tbody>/.exec(table)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) =>
      (cell[1] ?? '')
        .replace(/<[^>]+>/g, '')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
}

const olderLink = (page: string) =>
  /<a href="([^"]+)"[^>]*>Older entries<\/a>/.exec(page)?.[1]?.replaceAll('&amp;', '&');

describe('the dashboard writes the audit log', () => {
  it('records a sign-in with actor dashboard, the account and the address', async () => {
    const s = await signedIn();
    expect(await s.keys.audit({ accountId: 'acct_1' })).toEqual([
      expect.objectContaining({
        action: 'dashboard.signed_in',
        actor: { type: 'dashboard', id: 'acct_1' },
        address: ADDRESS,
      }),
    ]);
    expect((await s.keys.audit({ accountId: 'acct_1' }))[0]?.keyId).toBe(undefined);
  });

  it('records create, save, rotate and revoke made in the dashboard as the signed-in account', async () => {
    const s = await signedIn();
    const created = await s.client.post(`${BASE}/keys`, { name: 'ci', mode: 'test', allowedIps: '' });
    expect(created.status).toBe(201);
    const [key] = await s.keys.list('acct_1');
    const id = key?.id ?? '';
    await s.client.post(`${BASE}/keys/${id}`, { name: 'ci-2', allowedIps: '198.51.100.0/24' });
    await s.client.post(`${BASE}/keys/${id}/rotate`, {});
    await s.client.post(`${BASE}/keys/${id}/revoke`, { confirm: 'ci-2' });
    const entries = await s.keys.audit({ accountId: 'acct_1', keyId: id });
    expect(entries.map((e) => e.action)).toEqual(['key.revoked', 'key.rotated', 'key.updated', 'key.created']);
    for (const entry of entries) {
      expect(entry.actor).toEqual({ type: 'dashboard', id: 'acct_1' });
      expect(entry.address).toBe(ADDRESS);
    }
    expect(entries[2]?.changes).toEqual({
      name: { before: 'ci', after: 'ci-2' },
      allowedIps: { before: [], after: ['198.51.100.0/24'] },
    });
  });

  it('records the host login account as actor under resolveAccount', async () => {
    const s = setup({ resolveAccount: () => 'acct_host', clientIp: () => ADDRESS });
    const client = new Client(s.ui);
    await client.post(`${BASE}/keys`, { name: 'from-host', mode: 'live', allowedIps: '' });
    const [entry] = await s.keys.audit({ accountId: 'acct_host' });
    expect(entry).toMatchObject({ action: 'key.created', actor: { type: 'dashboard', id: 'acct_host' } });
  });
});

describe('the key page', () => {
  it('has a History section: when, action, actor with address, changes summarised, newest first', async () => {
    const s = await signedIn();
    const { key } = await s.keys.create(
      { accountId: 'acct_1', name: 'ci', mode: 'test' },
      { actor: { type: 'cli', id: 'alice' } },
    );
    await s.keys.update(key.id, { name: 'ci-2' }, { actor: { type: 'dashboard', id: 'acct_1' }, address: ADDRESS });
    const page = await (await s.client.get(`${BASE}/keys/${key.id}`)).text();
    expect(page).toContain('<h2 id="history-title">History</h2>');
    const rows = historyRows(page);
    expect(rows.map((r) => r.slice(1))).toEqual([
      ['key.updated', `dashboard acct_1 from ${ADDRESS}`, 'name: ci → ci-2'],
      ['key.created', 'cli alice', 'name ci; mode test; permissions none'],
    ]);
    expect(rows[0]?.[0]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    expect(olderLink(page)).toBe(undefined);
  });

  it('shows the 10 latest entries and links to older ones with before', async () => {
    const s = await signedIn();
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'v0', mode: 'test' });
    for (let i = 1; i <= 12; i++) await s.keys.update(key.id, { name: `v${i}` });
    const page = await (await s.client.get(`${BASE}/keys/${key.id}`)).text();
    expect(historyRows(page)).toHaveLength(10);
    const older = olderLink(page) ?? '';
    expect(older).toMatch(new RegExp(`^${BASE}/history\\?key=${key.id}&before=aud_[0-9a-z]{23}$`));
    const next = await (await s.client.get(older)).text();
    expect(next).toContain(`<h1>History of v12</h1>`);
    expect(historyRows(next).map((r) => r[3])).toEqual([
      'name: v1 → v2',
      'name: v0 → v1',
      'name v0; mode test; permissions none',
    ]);
  });

  it('says the store keeps no history when it holds no audit log', async () => {
    const memory = new MemoryKeyStore();
    const manager = new KeyManager({ store: keyStoreWithoutUsage(memory) });
    const s = await signedIn({ manager, store: new MemoryDashboardStore(memory) });
    const { key } = await manager.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    const page = await (await s.client.get(`${BASE}/keys/${key.id}`)).text();
    expect(page).toContain('This key store keeps no history.');
    const history = await s.client.get(`${BASE}/history`);
    expect(history.status).toBe(200);
    expect(await history.text()).toContain('This key store keeps no history.');
  });
});

describe('the account history page', () => {
  it('is linked from the key list as "Account history"', async () => {
    const s = await signedIn();
    const list = await (await s.client.get(`${BASE}/`)).text();
    expect(list).toContain(`<a href="${BASE}/history">Account history</a>`);
  });

  it('lists the account’s entries with their key, 50 a page, older pages by before, each entry once', async () => {
    const s = await signedIn();
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'k0', mode: 'test' });
    for (let i = 1; i <= 60; i++) await s.keys.update(key.id, { name: `k${i}` });
    const first = await (await s.client.get(`${BASE}/history`)).text();
    expect(first).toContain('<h1>Account history</h1>');
    const rows = historyRows(first);
    expect(rows).toHaveLength(50);
    expect(rows[0]?.slice(1, 3)).toEqual(['key.updated', key.id]);
    const second = await (await s.client.get(olderLink(first) ?? '')).text();
    const more = historyRows(second);
    // 60 updates, the creation and the sign-in: 62 entries.
    expect(more).toHaveLength(12);
    expect(more.at(-1)?.slice(1, 3)).toEqual(['dashboard.signed_in', 'account']);
    expect(olderLink(second)).toBe(undefined);
    expect(second).toContain(`<a href="${BASE}/history">Newest entries</a>`);
    const changes = [...rows, ...more].map((r) => r[4]);
    expect(new Set(changes).size).toBe(62);
  });

  it("never shows another account's entries, and answers 404 for another account's key", async () => {
    const s = await signedIn();
    const { key: theirs } = await s.keys.create({ accountId: 'acct_2', name: 'theirs', mode: 'live' });
    const page = await (await s.client.get(`${BASE}/history`)).text();
    expect(page).not.toContain(theirs.id);
    expect((await s.client.get(`${BASE}/history?key=${theirs.id}`)).status).toBe(404);
  });

  it('answers 400 for a before that is not an entry id', async () => {
    const s = await signedIn();
    expect((await s.client.get(`${BASE}/history?before=${encodeURIComponent('<x>')}`)).status).toBe(400);
  });

  it('escapes every value: names, actor ids and metadata in changes', async () => {
    const s = await signedIn();
    const evil = '<img src=x onerror=alert(1)>';
    const { key } = await s.keys.create(
      { accountId: 'acct_1', name: evil, mode: 'test' },
      { actor: { type: 'api', id: '<b>bot</b>' } },
    );
    await s.keys.update(key.id, { metadata: { note: '"><script>alert(2)</script>' } });
    for (const path of [`${BASE}/history`, `${BASE}/keys/${key.id}`, `${BASE}/history?key=${key.id}`]) {
      const page = await (await s.client.get(path)).text();
      expect(page).not.toContain('<img src=x');
      expect(page).not.toContain('<script>alert');
      expect(page).not.toContain('<b>bot</b>');
      expect(page).toContain('&lt;b&gt;bot&lt;/b&gt;');
    }
  });
});
