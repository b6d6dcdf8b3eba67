#!/usr/bin/env node
import { mkdirSync } from 'node:fs';
// `npm run screenshots`: renders the dashboard's key list, a key page with its usage chart and the
// create result (secret blurred) into docs/guide/screenshots/*.png, for the docs site's dashboard page. Runs the built package (dist/) in
// a local server and Debian's Chromium (CHROMIUM_PATH overrides /usr/bin/chromium).
import http from 'node:http';
import { join } from 'node:path';
import { KeyManager, MemoryKeyStore } from 'keygate';
import { dashboard, toNodeHandler } from 'keygate/dashboard';
import { utcDay } from 'keygate/store-kit';
import { chromium } from 'playwright-core';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'docs', 'guide', 'screenshots');
const DAY = 86_400_000;
const ACCOUNT = 'acct_northwind';

const store = new MemoryKeyStore();
let offset = -120 * DAY; // keys are created over the past months
const clock = () => Date.now() + offset;
const keys = new KeyManager({ store, clock });
const ui = dashboard({
  manager: keys,
  secret: 'screenshot-secret-of-at-least-32-bytes',
  basePath: '/dashboard',
  clock,
  permissions: ['email:verify', 'email:find', 'email:score'],
  accountPanel: () => [
    { label: 'Plan', value: 'Pay as you go' },
    { label: 'Credit balance', value: '€184.20' },
    { label: 'Billed requests this month', value: '412,907' },
  ],
});

/** A weekday-shaped history: busier Monday to Friday, a little noise, a few denials. */
async function history(keyId, base, denials, seed) {
  const counts = [];
  for (let i = 0; i < 30; i++) {
    const ms = Date.now() - i * DAY;
    const weekday = new Date(ms).getUTCDay() % 6 !== 0;
    const wave = 1 + 0.3 * Math.sin(i / (1.7 + seed * 0.6) + seed) + (i < seed * 3 ? 0.4 : 0);
    const day = utcDay(ms);
    counts.push({
      keyId,
      accountId: ACCOUNT,
      day,
      outcome: 'allowed',
      count: Math.round(base * wave * (weekday ? 1 : 0.35)),
    });
    if (denials && i % 3 === 0)
      counts.push({ keyId, accountId: ACCOUNT, day, outcome: 'ip_not_allowed', count: 4 + (i % 9) * 3 });
    if (denials && i % 7 === 2)
      counts.push({ keyId, accountId: ACCOUNT, day, outcome: 'insufficient_permissions', count: 11 });
  }
  await store.addUsage({
    counts,
    activity: [
      {
        keyId,
        lastUsedAt: new Date(Date.now() - (7 + seed * 97) * 60_000).toISOString(),
        lastUsedIp: `203.0.113.${24 + seed}`,
      },
    ],
  });
}

const KEYS = [
  ['legacy CRM sync', 'live', ['email:verify'], [], 'old'],
  ['staging API', 'test', ['email:verify', 'email:find', 'email:score'], []],
  ['CI pipeline', 'test', ['email:verify'], []],
  ['data team notebook', 'live', ['email:score'], ['198.51.100.0/24'], 'revoke'],
  ['signup form backend', 'live', ['email:verify'], ['203.0.113.0/24', '2001:db8:42::/48']],
  ['lead enrichment worker', 'live', ['email:find', 'email:score'], ['203.0.113.0/24']],
  ['production API', 'live', ['email:verify', 'email:find', 'email:score'], ['203.0.113.0/24', '2001:db8::/32']],
];

let featured;
for (const [seed, [name, mode, permissions, allowedIps, note]] of KEYS.entries()) {
  const { key } = await keys.create({ accountId: ACCOUNT, name, mode, permissions, allowedIps });
  if (note === 'revoke') await keys.revoke(key.id);
  if (name === 'production API') featured = key;
  if (note !== 'revoke') await history(key.id, mode === 'live' ? 1200 + seed * 400 : 300, mode === 'live', seed);
  offset += note === 'old' ? 50 * DAY : 9 * DAY;
}
offset = 0;

const server = http.createServer(toNodeHandler(ui));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
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
try {
  mkdirSync(out, { recursive: true });
  const page = await browser.newPage({ viewport: { width: 1200, height: 760 }, deviceScaleFactor: 1 });
  await page.goto(await ui.signInLink({ accountId: ACCOUNT, baseUrl: base }));
  await page.screenshot({ path: join(out, 'dashboard-list.png'), fullPage: true });

  await page.goto(`${base}/dashboard/keys/${featured.id}`);
  await page.setViewportSize({ width: 1200, height: 1040 });
  await page.screenshot({ path: join(out, 'dashboard-key.png') });
  await page.setViewportSize({ width: 1200, height: 480 });

  await page.goto(`${base}/dashboard/keys/new`);
  await page.getByLabel('Name').fill('mobile app backend');
  await page.getByLabel('Mode').selectOption('live');
  await page.getByLabel('email:verify').check();
  await page.getByLabel('Allowed IPs').fill('203.0.113.0/24');
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create key' }).click()]);
  // CSSOM, not an inline style attribute: the page's CSP forbids those, and the secret must not be readable.
  await page.getByLabel('New API key').evaluate((el) => {
    el.style.filter = 'blur(8px)';
  });
  await page.screenshot({ path: join(out, 'dashboard-created.png') });
  console.log(`screenshots written to ${out}`);
} finally {
  await browser.close();
  server.close();
}
