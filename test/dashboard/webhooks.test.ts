// The dashboard's webhooks page: the signed-in account's endpoints (never their secrets) and its
// delivery log, read only; another account's stay out of it; a store without an outbox says so.
import { KeyManager, MemoryKeyStore } from 'keygate';
import { createWebhookDispatcher, MemoryOutbox } from 'keygate/webhooks';
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

/** The rows of the table captioned `caption`, each as its cells' text. */
function rows(page: string, caption: string): string[][] {
  const table = new RegExp(`<caption>${caption}</caption>([\\s\\S]*?)</table>`).exec(page)?.[1] ?? '';
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

describe('the webhooks page', () => {
  it("lists the account's endpoints without secrets and its deliveries with their outcome, linked from the key list", async () => {
    const outbox = new MemoryOutbox();
    const store = new MemoryKeyStore({ outbox });
    const s = setup({ keyStore: store, manager: new KeyManager({ store }) });
    const { secret } = await outbox.endpoints.create({
      accountId: 'acct_1',
      url: 'https://hooks.example.com/<b>hooks</b>',
      eventTypes: ['key.created'],
    });
    await outbox.endpoints.create({ accountId: 'acct_2', url: 'https://other.example.com/hooks' });
    await s.keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    await createWebhookDispatcher({ outbox, fetch: async () => new Response(null, { status: 503 }) }).runOnce();
    const client = await new Client(s.ui).signIn();

    const list = await (await client.get(`${BASE}/`)).text();
    expect(list).toContain(`href="${BASE}/webhooks"`);
    const response = await client.get(`${BASE}/webhooks`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toMatch(/<h1>Webhooks<\/h1>/);
    expect(page).not.toContain(secret.slice(6));
    expect(page).not.toContain('<b>hooks</b>');
    expect(page).not.toContain('other.example.com');
    expect(rows(page, 'Webhook endpoints')).toEqual([
      ['https://hooks.example.com/%3Cb%3Ehooks%3C/b%3E', 'key.created', 'enabled', expect.any(String)],
    ]);
    const [delivery] = rows(page, 'Webhook deliveries');
    expect(delivery?.slice(1, 6)).toEqual([
      'key.created',
      'https://hooks.example.com/%3Cb%3Ehooks%3C/b%3E',
      'pending',
      '1',
      'HTTP 503',
    ]);
  });

  it('says so, and links nowhere, when the store keeps no outbox', async () => {
    const s = setup();
    const client = await new Client(s.ui).signIn();
    expect(await (await client.get(`${BASE}/`)).text()).not.toContain(`href="${BASE}/webhooks"`);
    expect(await (await client.get(`${BASE}/webhooks`)).text()).toContain('keeps no outbox');
  });
});
