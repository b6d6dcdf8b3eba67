// Browser tests drive the dashboard in Debian's Chromium (`/usr/bin/chromium`, or CHROMIUM_PATH)
// through playwright-core, over a real HTTP server (the Node bridge), and run axe-core on pages.
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { KeyManager, MemoryKeyStore } from 'keygate';
import { type Dashboard, type DashboardOptions, dashboard, toNodeHandler } from 'keygate/dashboard';
import { type UsageCount, utcDay } from 'keygate/store-kit';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SECRET = 'browser-test-secret-of-32-bytes-or-more';

/** One Chromium for a test file: headless, no sandbox (containers), nothing fetched from the network. */
export async function startBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium not found at ${CHROMIUM}: install the Debian package chromium or set CHROMIUM_PATH`);
  // Playwright gives each launch a fresh, temporary user-data-dir.
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface TestServer {
  base: string;
  ui: Dashboard;
  keys: KeyManager;
  store: MemoryKeyStore;
  /** Moves the dashboard's and the manager's clock forward. */
  advance(ms: number): void;
  now(): number;
  link(accountId: string): Promise<string>;
  close(): Promise<void>;
}

/** The dashboard at /dashboard of a Node HTTP server on 127.0.0.1, over a MemoryKeyStore; `options` add to its own. */
export async function startServer(options: Partial<DashboardOptions> = {}): Promise<TestServer> {
  let offset = 0;
  const clock = () => Date.now() + offset;
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store, clock });
  const ui = dashboard({
    manager: keys,
    secret: SECRET,
    basePath: '/dashboard',
    clock,
    permissions: ['email:verify', 'email:find', 'email:score'],
    ...options,
  });
  const server = http.createServer(toNodeHandler(ui));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    ui,
    keys,
    store,
    advance: (ms) => {
      offset += ms;
    },
    now: clock,
    link: (accountId) => ui.signInLink({ accountId, baseUrl: base }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Requests per day for a key over the last `days` days, with a few denials: a believable history. */
export async function seedUsage(server: TestServer, keyId: string, accountId: string, days = 30): Promise<void> {
  const counts: UsageCount[] = [];
  for (let i = 0; i < days; i++) {
    const day = utcDay(server.now() - i * 86_400_000);
    counts.push({ keyId, accountId, day, outcome: 'allowed', count: 200 + ((i * 37) % 90) * 5 });
    if (i % 4 === 0) counts.push({ keyId, accountId, day, outcome: 'ip_not_allowed', count: 3 + (i % 7) });
  }
  await server.store.addUsage({
    counts,
    activity: [{ keyId, lastUsedAt: new Date(server.now() - 3_600_000).toISOString(), lastUsedIp: '203.0.113.24' }],
  });
}

/** A fresh context (own cookies) with JavaScript on or off; records CSP violations reported on the console. */
export async function openContext(
  browser: Browser,
  js: boolean,
): Promise<{ context: BrowserContext; page: Page; cspErrors: string[] }> {
  const context = await browser.newContext({ javaScriptEnabled: js, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const cspErrors: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
  });
  return { context, page, cspErrors };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * Runs axe-core on the page (WCAG 2.x A and AA rules and best practices): no serious or critical
 * violation. Injected through the DevTools protocol, which the page's CSP does not govern; it needs
 * JavaScript on, so JavaScript-off runs check the same pages' HTML through their JavaScript-on twins.
 */
export async function expectAccessible(page: Page): Promise<void> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(() =>
    (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe
      .run()
      .then((r) => r.violations),
  )) as AxeViolation[];
  const bad = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad, `axe on ${page.url()}`).toEqual([]);
}

/** Checks a page: one h1 with `heading`, the security headers, and (JavaScript on) axe. */
export async function checkPage(page: Page, js: boolean, heading: string | RegExp): Promise<void> {
  await expect.poll(() => page.locator('h1').count()).toBe(1);
  const text = await page.locator('h1').innerText();
  if (typeof heading === 'string') expect(text).toBe(heading);
  else expect(text).toMatch(heading);
  if (js) await expectAccessible(page);
}
