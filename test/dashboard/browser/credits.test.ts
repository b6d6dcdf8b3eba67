// The "Credits" section of the account page in a real browser, with JavaScript on and off: the
// balance and the table named "Latest credit entries" reached by their accessible names; axe-core.
import { MemoryCreditLedger } from 'keygate';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, openContext, startBrowser, startServer, type TestServer } from './support.js';

let browser: Browser;
let server: TestServer;
const ledger = new MemoryCreditLedger();
beforeAll(async () => {
  [browser, server] = await Promise.all([startBrowser(), startServer({ credits: ledger })]);
  const { key } = await server.keys.create({ accountId: 'acct_credits', name: 'billing-worker', mode: 'live' });
  await ledger.topUp('acct_credits', 1_000, { reference: 'pi_3Nf' });
  const held = await ledger.hold('acct_credits', 3, { keyId: key.id });
  if (held.ok) await ledger.settle(held.holdId);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe.each([
  ['JavaScript on', true],
  ['JavaScript off', false],
])('%s', (_, js) => {
  it('shows the balance and the latest entries under "Credits"', async () => {
    const { context, page, cspErrors } = await openContext(browser, js);
    try {
      await page.goto(await server.link('acct_credits'));
      await checkPage(page, js, 'API keys');
      const section = page.getByRole('region', { name: 'Credits' });
      await expect.poll(() => section.getByText('997 credits').count()).toBe(1);
      const table = section.getByRole('table', { name: 'Latest credit entries' });
      const rows = table.locator('tbody tr');
      expect(await rows.count()).toBe(2);
      expect(await rows.nth(0).innerText()).toMatch(/charge\s+-3\s+997\s+billing-worker\s+none/);
      expect(await rows.nth(1).innerText()).toMatch(/top-up\s+\+1,000\s+1,000\s+none\s+pi_3Nf/);
      await expect.poll(() => table.getByRole('link', { name: 'billing-worker' }).count()).toBe(1);
      expect(cspErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
