// Every key flow in a real browser, with JavaScript on and off: create (with a 422 on the way),
// the one-time key, the key page with its usage chart, settings and the "Allow any address" rule,
// rotation with its status, and revocation with the typed-name confirmation. axe-core on each page.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, openContext, seedUsage, startBrowser, startServer, type TestServer } from './support.js';

let browser: Browser;
let server: TestServer;
// Screenshots a person can look at after a run; the path is printed by the test that writes one.
const shots = mkdtempSync(join(tmpdir(), 'keygate-dashboard-'));
beforeAll(async () => {
  [browser, server] = await Promise.all([startBrowser(), startServer()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Clicks something that submits or navigates; resolves with the final document's status. */
async function go(page: Page, target: Locator): Promise<number> {
  const [response] = await Promise.all([page.waitForNavigation(), target.click()]);
  return response?.status() ?? 0;
}

async function signedIn(js: boolean, accountId: string) {
  const opened = await openContext(browser, js);
  const response = await opened.page.goto(await server.link(accountId));
  expect(response?.status()).toBe(200);
  expect(new URL(opened.page.url()).pathname).toBe('/dashboard/');
  return opened;
}

describe.each([
  ['JavaScript on', true],
  ['JavaScript off', false],
])('%s', (_, js) => {
  const account = `acct_keys_${js ? 'js' : 'nojs'}`;

  it('creates a key: a bad allow-list entry comes back 422 with the input kept, then the key is shown once', async () => {
    const { context, page, cspErrors } = await signedIn(js, account);
    await checkPage(page, js, 'API keys');
    expect(await go(page, page.getByRole('link', { name: 'Create key' }))).toBe(200);
    await checkPage(page, js, 'Create key');
    await page.getByLabel('Name').fill('production server');
    await page.getByLabel('Mode').selectOption('live');
    await page.getByLabel('email:verify').check();
    await page.getByLabel('email:score').check();
    await page.getByLabel('Allowed IPs').fill('203.0.113.0/24\n10.0.0.300');
    expect(await go(page, page.getByRole('button', { name: 'Create key' }))).toBe(422);
    await checkPage(page, js, 'Create key');
    await expect.poll(() => page.getByText('Line 2: allow-list entry "10.0.0.300"').first().isVisible()).toBe(true);
    expect(await page.getByLabel('Name').inputValue()).toBe('production server');
    expect(await page.getByLabel('Mode').inputValue()).toBe('live');
    expect(await page.getByLabel('email:score').isChecked()).toBe(true);
    expect(await page.getByLabel('Allowed IPs').inputValue()).toBe('203.0.113.0/24\n10.0.0.300');
    expect(await page.getByLabel('Allowed IPs').getAttribute('aria-invalid')).toBe('true');
    expect(await server.keys.list(account)).toEqual([]);

    await page.getByLabel('Allowed IPs').fill('203.0.113.0/24\n2001:db8::/32');
    expect(await go(page, page.getByRole('button', { name: 'Create key' }))).toBe(201);
    await checkPage(page, js, 'Key created');
    const secret = await page.getByLabel('New API key').inputValue();
    expect(secret).toMatch(/^mk_live_[A-Za-z0-9]{38}$/);
    expect(page.url()).not.toContain(secret);
    expect(await page.getByLabel('New API key').evaluate((el) => el === document.activeElement)).toBe(true);
    const copy = page.getByRole('button', { name: 'Copy' });
    if (js) {
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await copy.click();
      await expect.poll(() => page.getByText('Copied to the clipboard.').isVisible()).toBe(true);
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    } else {
      expect(await copy.isVisible()).toBe(false);
    }
    const [key] = await server.keys.list(account);
    expect(key).toMatchObject({
      name: 'production server',
      mode: 'live',
      allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
    });
    expect([...(key?.permissions ?? [])].sort()).toEqual(['email:score', 'email:verify']);

    // The list shows it; the secret never appears again.
    expect(await go(page, page.getByRole('link', { name: 'Back to your API keys' }))).toBe(200);
    const table = page.getByRole('table', { name: 'API keys' });
    expect(await table.getByRole('row').count()).toBe(2);
    expect(await table.getByRole('link', { name: 'production server' }).isVisible()).toBe(true);
    expect(await page.content()).not.toContain(secret);
    // Back to the POST's answer: no-store, so the browser asks to resubmit instead of showing it again.
    await page.goBack({ waitUntil: 'load' }).catch(() => {});
    await page.waitForLoadState('load');
    await expect.poll(() => page.content().catch(() => 'navigating')).not.toContain(secret);
    expect(cspErrors).toEqual([]);
    await context.close();
  });

  it('shows the key page with its usage chart; saves settings; clearing the allow list needs "Allow any address"', async () => {
    const { key } = await server.keys.create({
      accountId: account,
      name: 'billing worker',
      mode: 'test',
      permissions: ['email:find'],
      allowedIps: ['198.51.100.0/24'],
    });
    await seedUsage(server, key.id, account);
    const { context, page, cspErrors } = await signedIn(js, account);
    expect(await go(page, page.getByRole('link', { name: 'billing worker' }))).toBe(200);
    await checkPage(page, js, 'billing worker');
    const chart = page.getByRole('img', {
      name: /Requests per day over the last 30 days: [\d,]+ allowed, [\d,]+ denied/,
    });
    expect(await chart.count()).toBe(1);
    const byDay = page.getByRole('table', { name: 'Usage by day' });
    expect(await byDay.getByRole('row').count()).toBe(31);
    expect(await page.getByRole('table', { name: 'Denials by reason' }).innerText()).toContain('Address not allowed');
    expect(await page.locator('code', { hasText: '203.0.113.24' }).count()).toBe(1);

    await page.getByLabel('Name').fill('billing worker v2');
    await page.getByLabel('email:verify').check();
    expect(await go(page, page.getByRole('button', { name: 'Save changes' }))).toBe(200);
    await checkPage(page, js, 'billing worker v2');
    expect(await page.getByRole('status').filter({ hasText: 'Changes saved.' }).count()).toBe(1);

    await page.getByLabel('Allowed IPs').fill('');
    expect(await go(page, page.getByRole('button', { name: 'Save changes' }))).toBe(422);
    await checkPage(page, js, 'billing worker v2');
    expect(await page.getByText('tick “Allow any address”').first().isVisible()).toBe(true);
    expect((await server.keys.get(key.id))?.allowedIps).toEqual(['198.51.100.0/24']);
    await page.getByLabel('Allow any address').check();
    expect(await go(page, page.getByRole('button', { name: 'Save changes' }))).toBe(200);
    expect(await server.keys.get(key.id)).toMatchObject({ name: 'billing worker v2', allowedIps: [] });
    expect(cspErrors).toEqual([]);
    await context.close();
  });

  it('rotates: the new key once, then the status; "Revoke old key" is enabled when the overlap is safe', async () => {
    const { key: old } = await server.keys.create({ accountId: account, name: 'api gateway', mode: 'live' });
    const { context, page, cspErrors } = await signedIn(js, account);
    await page.goto(`${server.base}/dashboard/keys/${old.id}`);
    expect(await go(page, page.getByRole('button', { name: 'Rotate key' }))).toBe(201);
    await checkPage(page, js, 'Key rotated');
    expect(await page.getByLabel('New API key').inputValue()).toMatch(/^mk_live_/);
    expect(await go(page, page.getByRole('link', { name: "the old key's page" }))).toBe(200);
    await checkPage(page, js, 'api gateway');
    const finish = page.getByRole('button', { name: 'Revoke old key' });
    expect(await page.getByRole('region', { name: 'Rotation' }).innerText()).toContain('New key seen: not yet');
    expect(await finish.isDisabled()).toBe(true);

    const next = (await server.keys.get(old.id))?.rotatedTo as string;
    server.advance(60_000);
    await server.store.addUsage({
      counts: [],
      activity: [{ keyId: next, lastUsedAt: new Date(server.now()).toISOString(), lastUsedIp: '203.0.113.5' }],
    });
    server.advance(16 * 60_000);
    await page.reload();
    expect(await page.getByRole('region', { name: 'Rotation' }).innerText()).toMatch(
      /New key seen: yes[\s\S]*Old key quiet: yes/,
    );
    expect(await finish.isEnabled()).toBe(true);
    expect(await go(page, finish)).toBe(200);
    await checkPage(page, js, 'Revoke old key');
    await page.getByLabel('Type the key name to confirm').fill('api');
    expect(await go(page, page.getByRole('button', { name: 'Revoke permanently' }))).toBe(422);
    expect((await server.keys.get(old.id))?.status).toBe('active');
    await page.getByLabel('Type the key name to confirm').fill('api gateway');
    expect(await go(page, page.getByRole('button', { name: 'Revoke permanently' }))).toBe(200);
    await checkPage(page, js, 'api gateway');
    expect((await server.keys.get(old.id))?.status).toBe('revoked');
    expect((await server.keys.get(next))?.status).toBe('active');
    expect(cspErrors).toEqual([]);
    await context.close();
  });

  it('revokes only after the key name is typed; a wrong name revokes nothing', async () => {
    const { key } = await server.keys.create({ accountId: account, name: 'old laptop', mode: 'test' });
    const { context, page, cspErrors } = await signedIn(js, account);
    await page.goto(`${server.base}/dashboard/keys/${key.id}`);
    expect(await go(page, page.getByRole('button', { name: 'Revoke key' }))).toBe(200);
    await checkPage(page, js, 'Revoke key');
    expect(page.url()).toBe(`${server.base}/dashboard/keys/${key.id}/revoke`);
    await page.getByLabel('Type the key name to confirm').fill('old');
    expect(await go(page, page.getByRole('button', { name: 'Revoke permanently' }))).toBe(422);
    await checkPage(page, js, 'Revoke key');
    expect((await server.keys.get(key.id))?.status).toBe('active');
    await page.getByLabel('Type the key name to confirm').fill('old laptop');
    expect(await go(page, page.getByRole('button', { name: 'Revoke permanently' }))).toBe(200);
    await checkPage(page, js, 'old laptop');
    expect((await server.keys.get(key.id))?.status).toBe('revoked');
    expect(await page.getByRole('button', { name: 'Save changes' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Revoke key' }).count()).toBe(0);
    expect(cspErrors).toEqual([]);
    await context.close();
  });
});

describe.each([
  ['JavaScript on', true],
  ['JavaScript off', false],
])('%s, rough edges', (_, js) => {
  const account = `acct_edges_${js ? 'js' : 'nojs'}`;

  it('a reload of "Key created" sends the form again and creates no second key', async () => {
    const { context, page, cspErrors } = await signedIn(js, account);
    await page.goto(`${server.base}/dashboard/keys/new`);
    await page.getByLabel('Name').fill('reloaded');
    expect(await go(page, page.getByRole('button', { name: 'Create key' }))).toBe(201);
    const secret = await page.getByLabel('New API key').inputValue();
    const [again] = await Promise.all([page.waitForNavigation(), page.reload()]);
    expect(again?.request().method()).toBe('POST');
    expect(again?.status()).toBe(409);
    await checkPage(page, js, 'Key already created');
    expect(await page.content()).not.toContain(secret);
    expect((await server.keys.list(account)).map((k) => k.name)).toEqual(['reloaded']);
    expect(await go(page, page.getByRole('link', { name: "Go to the key's page" }))).toBe(200);
    await checkPage(page, js, 'reloaded');
    expect(cspErrors).toEqual([]);
    await context.close();
  });

  it('wraps a 200-character name: the key table stays within the 1280 px viewport', async () => {
    const name = 'x'.repeat(200);
    await server.keys.create({ accountId: account, name, mode: 'test' });
    const { context, page } = await signedIn(js, account);
    const table = page.getByRole('table', { name: 'API keys' });
    const box = await table.boundingBox();
    await page.screenshot({ path: join(shots, `long-name-${js ? 'js' : 'nojs'}.png`), fullPage: true });
    expect(box?.width).toBeGreaterThan(0);
    expect((box?.x ?? 0) + (box?.width ?? Number.POSITIVE_INFINITY)).toBeLessThanOrEqual(1280);
    const pageWidth = await page.locator('html').evaluate((el) => el.scrollWidth);
    expect(pageWidth).toBeLessThanOrEqual(1280);
    expect(await table.getByRole('rowheader').filter({ hasText: name }).count()).toBe(1);
    await context.close();
  });

  it("asks for no resource that is missing: the icon is the dashboard's own", async () => {
    const missing: string[] = [];
    const { context, page } = await signedIn(js, account);
    page.on('response', (response) => {
      if (response.status() === 404) missing.push(response.url());
    });
    await page.goto(`${server.base}/dashboard/`);
    await page.goto(`${server.base}/dashboard/keys/new`);
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    expect(icon).toBe('/dashboard/assets/favicon.svg');
    expect((await page.request.get(`${server.base}${icon}`)).status()).toBe(200);
    expect(missing).toEqual([]);
    await context.close();
  });
});
