// Signing in and out, the key list (pagination, filter, sparklines, rotation due) and keyboard use,
// in a real browser with JavaScript on and off; axe-core on each page.
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, openContext, seedUsage, startBrowser, startServer, type TestServer } from './support.js';

let browser: Browser;
let server: TestServer;
beforeAll(async () => {
  [browser, server] = await Promise.all([startBrowser(), startServer()]);
  // 60 keys for one account, some used, one past the 90-day rotation mark.
  const { key: oldest } = await server.keys.create({ accountId: 'acct_many', name: 'legacy import job', mode: 'live' });
  server.advance(100 * 86_400_000);
  await seedUsage(server, oldest.id, 'acct_many');
  for (let i = 1; i < 60; i++) {
    server.advance(1000);
    const { key } = await server.keys.create({
      accountId: 'acct_many',
      name: `service-${String(i).padStart(2, '0')}`,
      mode: i % 3 ? 'test' : 'live',
    });
    if (i % 10 === 0) await seedUsage(server, key.id, 'acct_many', 12);
  }
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function go(page: Page, target: Locator): Promise<number> {
  const [response] = await Promise.all([page.waitForNavigation(), target.click()]);
  return response?.status() ?? 0;
}

describe.each([
  ['JavaScript on', true],
  ['JavaScript off', false],
])('%s', (_, js) => {
  it('signs in with a one-time link; the same link then fails with 401; signing out ends the session', async () => {
    const { context, page, cspErrors } = await openContext(browser, js);
    const before = await page.goto(`${server.base}/dashboard/`);
    expect(before?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await checkPage(page, js, 'Sign in');

    const link = await server.link('acct_many');
    expect((await page.goto(link))?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/dashboard/');
    await checkPage(page, js, 'API keys');
    const cookie = (await context.cookies()).find((c) => c.name === 'keygate_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/dashboard' });

    const other = await openContext(browser, js);
    expect((await other.page.goto(link))?.status()).toBe(401);
    await checkPage(other.page, js, 'Sign-in link not valid');
    expect((await other.context.cookies()).some((c) => c.name === 'keygate_session')).toBe(false);
    await other.context.close();

    expect(await go(page, page.getByRole('button', { name: 'Sign out' }))).toBe(200);
    await checkPage(page, js, 'Sign in');
    expect(await page.getByRole('status').innerText()).toBe('You have signed out.');
    await page.goto(`${server.base}/dashboard/`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect(cspErrors).toEqual([]);
    await context.close();
  });

  it('a link opened over a session asks first, naming the account; its button, reached by keyboard, signs in', async () => {
    const { context, page, cspErrors } = await openContext(browser, js);
    await page.goto(await server.link(`acct_first_${js}`));
    const link = await server.link(`acct_second_${js}`);
    expect((await page.goto(link))?.status()).toBe(200);
    await checkPage(page, js, 'Confirm sign-in');
    expect(await page.locator('main').innerText()).toContain(`acct_second_${js}`);
    let reached = '';
    for (let i = 0; i < 12 && reached !== 'Sign in'; i++) {
      await page.keyboard.press('Tab');
      reached = await page
        .locator(':focus')
        .innerText()
        .catch(() => '');
    }
    expect(reached).toBe('Sign in');
    const [response] = await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(response?.status()).toBe(200);
    await checkPage(page, js, 'API keys');
    expect(await page.locator('header').innerText()).toContain(`acct_second_${js}`);
    expect(cspErrors).toEqual([]);
    await context.close();
  });

  it('lists 50 keys a page with mode, hint, status, sparklines and rotation due; pages and filters by name and mode', async () => {
    const { context, page, cspErrors } = await openContext(browser, js);
    await page.goto(await server.link('acct_many'));
    const table = page.getByRole('table', { name: 'API keys' });
    expect(await table.getByRole('row').count()).toBe(51);
    const headers = await table.getByRole('columnheader').allInnerTexts();
    expect(await table.locator('tbody tr').first().getByRole('rowheader').innerText()).toBe('service-59');
    expect(headers).toEqual(['Name', 'Mode', 'Hint', 'Status', 'Created', 'Last used', 'Last 30 days', 'Rotation']);
    expect(await page.getByText('Page 1 of 2').isVisible()).toBe(true);
    expect(await table.getByRole('img', { name: /requests in the last 30 days/ }).count()).toBeGreaterThan(0);

    expect(await go(page, page.getByRole('link', { name: 'Next' }))).toBe(200);
    await checkPage(page, js, 'API keys');
    expect(await table.getByRole('row').count()).toBe(11);
    const legacy = table.getByRole('row', { name: /legacy import job/ });
    expect(await legacy.getByRole('cell').allInnerTexts()).toEqual(
      expect.arrayContaining(['live', 'active', 'due', expect.stringMatching(/^mk_live_…/)]),
    );
    expect(await legacy.getByRole('img', { name: /^[\d,]+ requests in the last 30 days$/ }).count()).toBe(1);

    await page.getByLabel('Filter by name').fill('service-1');
    expect(await go(page, page.getByRole('button', { name: 'Filter' }))).toBe(200);
    await checkPage(page, js, 'API keys');
    const names = await table.getByRole('rowheader').allInnerTexts();
    expect(names.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `service-1${i}`));
    expect(page.url()).toContain('q=service-1');
    await page.getByLabel('Mode').selectOption('live');
    expect(await go(page, page.getByRole('button', { name: 'Filter' }))).toBe(200);
    await checkPage(page, js, 'API keys');
    expect((await table.getByRole('rowheader').allInnerTexts()).sort()).toEqual([
      'service-12',
      'service-15',
      'service-18',
    ]);
    expect(page.url()).toContain('mode=live');
    expect(cspErrors).toEqual([]);
    await context.close();
  });

  it('is usable by keyboard: Tab reaches "Create key", Enter follows it, and the form submits with Enter', async () => {
    const { context, page } = await openContext(browser, js);
    const account = `acct_keyboard_${js}`;
    await page.goto(await server.link(account));
    let reached = '';
    for (let i = 0; i < 12 && reached !== 'Create key'; i++) {
      await page.keyboard.press('Tab');
      reached = await page
        .evaluate(() => (document.activeElement as HTMLElement | null)?.innerText ?? '')
        .catch(() => '');
      if (!js)
        reached =
          (await page
            .locator(':focus')
            .innerText()
            .catch(() => '')) || reached;
    }
    expect(reached).toBe('Create key');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    await checkPage(page, js, 'Create key');
    await page.getByLabel('Name').focus();
    await page.keyboard.type('typed by keyboard');
    const [response] = await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(response?.status()).toBe(201);
    expect((await server.keys.list(account)).map((k) => k.name)).toEqual(['typed by keyboard']);
    await context.close();
  });

  it("answers a page that does not exist with 404, and another account's key the same way", async () => {
    const { key } = await server.keys.create({ accountId: 'acct_other', name: 'not yours', mode: 'test' });
    const { context, page } = await openContext(browser, js);
    await page.goto(await server.link('acct_many'));
    expect((await page.goto(`${server.base}/dashboard/keys/${key.id}`))?.status()).toBe(404);
    await checkPage(page, js, 'Key not found');
    expect(await page.content()).not.toContain('not yours');
    expect((await page.goto(`${server.base}/dashboard/nowhere`))?.status()).toBe(404);
    await checkPage(page, js, 'Page not found');
    await context.close();
  });
});
