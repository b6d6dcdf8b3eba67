// The dashboard follows the manager instead of keeping rules of its own: rotation due from the
// manager's rotationDays, write-time validation (a key pasted as a permission), whether usage is
// kept (the manager's answer, CachedKeyStore included), and the quiet window when a rotation is finished.
import { CachedKeyStore, generateKey, InvalidInputError, KeyManager, MemoryKeyStore } from 'keygate';
import { MemoryDashboardStore } from 'keygate/dashboard';
import { describe, expect, it } from 'vitest';
import { BASE, Client, csrfOf, fakeClock, keyStoreWithoutUsage, setup } from './support.js';

const DAY = 86_400_000;

async function signedIn(options: Parameters<typeof setup>[0] = {}) {
  const s = setup(options);
  return { ...s, client: await new Client(s.ui).signIn() };
}

const rowOf = (html: string, name: string) =>
  html.slice(html.indexOf(`>${name}</a>`), html.indexOf('</tr>', html.indexOf(`>${name}</a>`)));

describe('rotation due', () => {
  it("follows the manager's rotationDays", async () => {
    const store = new MemoryKeyStore();
    const clock = fakeClock();
    const manager = new KeyManager({ store, clock, rotationDays: 30 });
    const s = await signedIn({ manager, keyStore: store, clock });
    const { key: old } = await manager.create({ accountId: 'acct_1', name: 'old', mode: 'live' });
    clock.advance(31 * DAY);
    await s.client.signIn(); // the first session ended long ago
    await manager.create({ accountId: 'acct_1', name: 'fresh', mode: 'test' });
    expect((await manager.get(old.id))?.rotationDue).toBe(true);
    const list = await (await s.client.get(`${BASE}/`)).text();
    expect(rowOf(list, 'old')).toContain('badge-warn">due</span>');
    expect(rowOf(list, 'fresh')).not.toContain('>due<');
    expect(await (await s.client.get(`${BASE}/keys/${old.id}`)).text()).toContain('rotation due');
  });

  it('refuses a rotationDays option of its own (the manager decides), naming the field', () => {
    expect(() => setup({ rotationDays: 1 } as never)).toThrow(
      expect.objectContaining({
        code: 'invalid_input',
        field: 'rotationDays',
        issues: [expect.objectContaining({ reason: 'unknown_option' })],
      }),
    );
  });
});

describe('a permission shaped like an API key', () => {
  it.each([
    [
      'the permissions text field',
      { permissions: undefined },
      (key: string) => ({ permissionsText: `email:verify\n${key}` }),
    ],
    ['a forged catalogue checkbox', {}, (key: string) => ({ permissions: ['email:verify', key] })],
  ])('typed into %s is refused (422), not created and never echoed', async (_, options, field) => {
    const s = await signedIn(options);
    const pasted = generateKey({ mode: 'live' });
    const response = await s.client.post(`${BASE}/keys`, { name: 'k', mode: 'live', ...field(pasted) });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain('id="permissions-error"');
    expect(html).toContain('looks like an API key');
    expect(html).not.toContain(pasted);
    expect(html).not.toContain(pasted.slice(-24));
    expect(html).toContain('email:verify');
    expect(await s.keys.list('acct_1')).toEqual([]);
    expect(s.events).toEqual([]);
  });

  it('on the settings form is refused too, and the key keeps its permissions', async () => {
    const s = await signedIn({ permissions: undefined });
    const { key } = await s.keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test', permissions: ['a:b'] });
    const pasted = generateKey({ mode: 'test' });
    const response = await s.client.post(`${BASE}/keys/${key.id}`, { name: 'ci', permissionsText: pasted });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain('id="permissions-error"');
    expect(html).not.toContain(pasted);
    expect(await s.keys.get(key.id)).toMatchObject({ permissions: ['a:b'], version: 1 });
  });
});

describe("a manager's refusal of a rate-limit member", () => {
  it('lands on "Rate limit", not "Name"', async () => {
    const store = new MemoryKeyStore();
    const manager = new KeyManager({ store });
    manager.create = async () => {
      throw new InvalidInputError('rateLimit.limit', 'rateLimit.limit must be at most 1000');
    };
    const s = await signedIn({ manager, keyStore: store, rateLimits: true });
    const response = await s.client.post(`${BASE}/keys`, { name: 'k', mode: 'test', rateLimit: '5000' });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain('id="rateLimit-error"');
    expect(html).not.toContain('id="name-error"');
    expect(html).toContain('rateLimit.limit must be at most 1000');
  });
});

describe('a CachedKeyStore over a store that keeps no usage', () => {
  it('shows no usage on the key page and the list, instead of failing', async () => {
    const memory = new MemoryKeyStore();
    const manager = new KeyManager({ store: new CachedKeyStore(keyStoreWithoutUsage(memory)) });
    const s = await signedIn({ manager, store: new MemoryDashboardStore(memory) });
    const { key } = await manager.create({ accountId: 'acct_1', name: 'k', mode: 'test' });
    const page = await s.client.get(`${BASE}/keys/${key.id}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('This key store keeps no usage statistics.');
    const list = await s.client.get(`${BASE}/`);
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('No requests in the last 30 days');
  });
});

describe('finishing a rotation', () => {
  it('is refused (409, nothing revoked) when the old key is used after the status was read', async () => {
    const s = await signedIn();
    const { key: old } = await s.keys.create({ accountId: 'acct_1', name: 'api', mode: 'live' });
    expect((await s.client.post(`${BASE}/keys/${old.id}/rotate`, {})).status).toBe(201);
    const next = (await s.keys.get(old.id))?.rotatedTo as string;
    const used = (keyId: string) =>
      s.store.addUsage({
        counts: [],
        activity: [{ keyId, lastUsedAt: new Date(s.clock()).toISOString(), lastUsedIp: '203.0.113.1' }],
      });
    s.clock.advance(60_000);
    await used(next);
    s.clock.advance(15 * 60_000);
    const csrf = csrfOf(await (await s.client.get(`${BASE}/keys/${old.id}`)).text());
    const status = s.keys.rotationStatus.bind(s.keys);
    s.keys.rotationStatus = async (id, options) => {
      const answer = await status(id, options);
      await used(old.id); // traffic on the old key between the check and the revocation
      return answer;
    };
    const response = await s.client.post(`${BASE}/keys/${old.id}/finish-rotation`, {
      _csrf: csrf,
      confirm: 'api',
    });
    expect(response.status).toBe(409);
    expect((await s.keys.get(old.id))?.status).toBe('active');
    expect(s.events.map((e) => e.type)).not.toContain('key.revoked');
  });
});
