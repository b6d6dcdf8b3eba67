// The "Credits" section of the account page ("API keys"), from the dashboard's `credits` ledger:
// the available balance and the latest entries, read only, escaped, and a short notice instead of a
// 500 when the ledger fails.
import { type CreditLedger, KeyManager, MemoryCreditLedger, MemoryKeyStore } from 'keygate';
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

async function signedIn(options: Parameters<typeof setup>[0] = {}) {
  const s = setup(options);
  return { ...s, client: await new Client(s.ui).signIn() };
}

/** The section headed "Credits", or '' when the page has none. */
function creditsSection(html: string): string {
  const start = html.indexOf('<section class="card credits"');
  return start < 0 ? '' : html.slice(start, html.indexOf('</section>', start));
}

/** The cells of the table captioned "Latest credit entries", row by row, as text. */
function entryRows(section: string): string[][] {
  const table = /<caption>Latest credit entries<\/caption>[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(section)?.[1] ?? '';
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) =>
      (cell[1] ?? '').replace(/<[^>]+>/g, '').trim(),
    ),
  );
}

async function settle(ledger: CreditLedger, account: string, amount: number, keyId?: string) {
  const held = await ledger.hold(account, amount, keyId === undefined ? {} : { keyId });
  if (!held.ok) throw new Error('no credits to hold');
  await ledger.settle(held.holdId);
}

describe('the Credits section of the account page', () => {
  it('is absent without a credits ledger', async () => {
    const s = await signedIn();
    const html = await (await s.client.get(`${BASE}/`)).text();
    expect(html).not.toContain('credits-title');
    expect(html).not.toContain('Latest credit entries');
  });

  it('shows the available balance and the 10 newest entries: date, kind, amount, balance after, key, reference', async () => {
    const ledger = new MemoryCreditLedger();
    const s = await signedIn({ credits: ledger });
    const mine = await s.keys.create({ accountId: 'acct_1', name: 'billing-worker', mode: 'live' });
    const theirs = await s.keys.create({ accountId: 'acct_2', name: 'their secret name', mode: 'live' });
    await ledger.topUp('acct_1', 1_500, { reference: 'pi_first' });
    for (let i = 0; i < 9; i++) await settle(ledger, 'acct_1', 1, mine.key.id);
    await settle(ledger, 'acct_1', 2, theirs.key.id);
    await settle(ledger, 'acct_1', 3);
    await ledger.topUp('acct_1', 2_000, { reference: 'pi_second' });
    await ledger.hold('acct_1', 4);
    await ledger.topUp('acct_2', 99);

    const response = await s.client.get(`${BASE}/`);
    expect(response.status).toBe(200);
    const section = creditsSection(await response.text());
    expect(section).toContain('<h2 id="credits-title">Credits</h2>');
    expect(section).toContain('<dt>Available balance</dt><dd>3,482 credits</dd>');
    const rows = entryRows(section);
    expect(rows).toHaveLength(10);
    expect(rows.map((r) => r.slice(1))).toEqual([
      ['top-up', '+2,000', '3,486', 'none', 'pi_second'],
      ['charge', '-3', '1,486', 'none', 'none'],
      // Another account's key is named by its id, never by its name.
      ['charge', '-2', '1,489', theirs.key.id, 'none'],
      ...Array.from({ length: 7 }, (_, i) => [
        'charge',
        '-1',
        (1_491 + i).toLocaleString('en-US'),
        'billing-worker',
        'none',
      ]),
    ]);
    expect(rows[0]?.[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(section).toContain(`<a href="/dashboard/keys/${mine.key.id}">billing-worker</a>`);
    expect(section).not.toContain('their secret name');
    expect(section).not.toContain('pi_first');
  });

  it('says so when the account has no entries yet', async () => {
    const s = await signedIn({ credits: new MemoryCreditLedger() });
    const section = creditsSection(await (await s.client.get(`${BASE}/`)).text());
    expect(section).toContain('<dd>0 credits</dd>');
    expect(section).toContain('No credit entries yet.');
    expect(section).not.toContain('<table');
  });

  it('escapes references and key names', async () => {
    const ledger = new MemoryCreditLedger();
    const s = await signedIn({ credits: ledger });
    const key = await s.keys.create({ accountId: 'acct_1', name: '<img src=x onerror=alert(1)>', mode: 'live' });
    await ledger.topUp('acct_1', 10, { reference: '"><script>alert(1)</script>' });
    await settle(ledger, 'acct_1', 1, key.key.id);
    await settle(ledger, 'acct_1', 1, '<b>key</b>');
    const section = creditsSection(await (await s.client.get(`${BASE}/`)).text());
    expect(section).not.toMatch(/<script|<img|<b>/);
    expect(section).toContain('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(section).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(section).toContain('&lt;b&gt;key&lt;/b&gt;');
  });

  it.each([
    ['balance', 'rejects'],
    ['entries', 'rejects'],
    ['balance', 'throws'],
  ] as const)(
    'when the ledger’s %s %s, the page is still a 200 with "Balance unavailable" and the keys listed',
    async (method, how) => {
      const ledger = new MemoryCreditLedger();
      const failure = new Error('ledger down at 10.0.0.7');
      ledger[method] = (() => {
        if (how === 'throws') throw failure;
        return Promise.reject(failure);
      }) as never;
      const errors: unknown[] = [];
      const s = await signedIn({ credits: ledger, onError: (err) => void errors.push(err) });
      await s.keys.create({ accountId: 'acct_1', name: 'still listed', mode: 'test' });
      const response = await s.client.get(`${BASE}/`);
      expect(response.status).toBe(200);
      const html = await response.text();
      expect(creditsSection(html)).toContain('Balance unavailable');
      expect(html).not.toContain('10.0.0.7');
      expect(html).toContain('>still listed</a>');
      expect(errors).toEqual([failure]);
    },
  );

  it('only reads the ledger: balance and entries, never a top-up, hold, settle or release', async () => {
    const ledger = new MemoryCreditLedger();
    await ledger.topUp('acct_1', 5);
    const calls: string[] = [];
    const watched = new Proxy(ledger, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(name));
          return value.apply(target, args);
        };
      },
    });
    const s = await signedIn({ credits: watched });
    await s.client.get(`${BASE}/`);
    await s.client.post(`${BASE}/keys`, { name: 'a key', mode: 'test' });
    await s.client.get(`${BASE}/`);
    expect(new Set(calls)).toEqual(new Set(['balance', 'entries']));
    expect(await ledger.balance('acct_1')).toBe(5);
  });

  it.each([[{}], [null], ['ledger'], [{ balance: () => 0 }]])(
    'refuses credits %j that is not a ledger, naming credits',
    (credits) => {
      expect(() =>
        setup({ credits: credits as never, manager: new KeyManager({ store: new MemoryKeyStore() }) }),
      ).toThrow(expect.objectContaining({ code: 'invalid_input', field: 'credits' }));
    },
  );
});
