// The sign-in link `npm start` prints, opened in Chromium: the demo account's "API keys" table with the
// demo keys and the account panel, with JavaScript on and off (axe-core with it on).
import { keyHint } from 'keygate';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, openContext, startBrowser } from '../../dashboard/browser/support.js';
import { DEMO_CREDITS, fakeDns, main } from './service.js';

const KEY_LINE = /^mk_(test|live)_[0-9A-Za-z]{38}$/;
const LINK_LINE = /^http:\/\/\S+\/dashboard\/sign-in\?token=[\w.-]+$/;

let browser: Browser;
beforeAll(async () => {
  browser = await startBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** The service as `npm start -- --memory` runs it (a link is single-use: each test starts its own). */
async function startService() {
  const printed: string[] = [];
  const started = await main({
    argv: ['--memory'],
    env: { PORT: '0' },
    log: (text) => printed.push(...text.split('\n')),
    resolver: fakeDns().resolver,
  });
  return {
    ...started,
    link: printed.find((line) => LINK_LINE.test(line)) as string,
    secrets: printed.filter((line) => KEY_LINE.test(line)),
  };
}

describe.each([
  ['JavaScript on', true],
  ['JavaScript off', false],
])('the printed sign-in link in Chromium, %s', (_, js) => {
  it('opens the "API keys" table with the demo keys and the account panel', async () => {
    const service = await startService();
    const { context, page, cspErrors } = await openContext(browser, js);
    try {
      expect(service.link).toBeDefined();
      expect((await page.goto(service.link))?.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/dashboard/');
      await checkPage(page, js, 'API keys');

      const table = page.getByRole('table', { name: 'API keys' });
      const names = await table.locator('tbody th[scope="row"]').allInnerTexts();
      expect(names.sort()).toEqual(['demo live', 'demo test']);
      expect(service.secrets).toHaveLength(2);
      for (const secret of service.secrets) expect(await table.getByText(keyHint(secret)).count()).toBe(1);

      const panel = await page.getByRole('region', { name: 'Account' }).innerText();
      expect(panel).toContain('Billed requests this month');
      const credits = await page.getByRole('region', { name: 'Credits' }).innerText();
      expect(credits).toContain(`${DEMO_CREDITS.toLocaleString('en-US')} credits`);
      expect(await page.getByRole('table', { name: 'Latest credit entries' }).locator('tbody tr').count()).toBe(1);
      expect(cspErrors).toEqual([]);
    } finally {
      await context.close();
      await service.close();
    }
  });
});
