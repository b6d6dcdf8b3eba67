// The example service's dashboard at /dashboard: the sign-in link `npm start` prints, the demo
// account's keys and its account panel (balance, this month's billed requests), and where the
// dashboard secret comes from (KEYGATE_DASHBOARD_SECRET, the data folder, memory, the process).
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { type CreditLedger, keyHint, MemoryCreditLedger } from 'keygate';
import { createSignInLink } from 'keygate/dashboard';
import { PostgresCreditLedger } from 'keygate/postgres';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { accountPanel, PANEL_ENTRIES } from '../../../examples/email-verification/dashboard.js';
import { PG_URL, RUN_ID, serviceAvailable } from '../../stores/support/services.js';
import { DEMO_CREDITS, main, PGLITE, startMain } from './service.js';

const LINK_LINE = /^(http:\/\/\S+\/dashboard\/sign-in\?token=[\w.-]+)$/m;
const SECRET = 'example-dashboard-secret-of-32-bytes-or-more';

/** Starts the service in this process, as `npm start` does, and keeps what it printed. */
async function start(argv: string[], env: Record<string, string> = {}) {
  const started = await startMain(argv, env);
  return { ...started, link: LINK_LINE.exec(started.output)?.[1] ?? '' };
}

/** Opens a sign-in link the way a browser does: the 303 and its cookie, then the page it leads to. */
async function signIn(link: string) {
  const res = await fetch(link, { redirect: 'manual' });
  const cookies = res.headers.getSetCookie();
  const cookie = cookies.map((c) => c.split(';')[0]).join('; ');
  return { status: res.status, location: res.headers.get('location'), cookies, cookie };
}

async function page(url: string, cookie: string) {
  const res = await fetch(url, { headers: { cookie } });
  return { status: res.status, html: await res.text() };
}

const pgUp = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'keygate-email-dashboard-'));
  dirs.push(dir);
  return dir;
};

describe('the dashboard of the example service', PGLITE, () => {
  it("prints a sign-in link after the demo keys; it opens the demo account's keys and its account panel", async () => {
    const s = await start(['--memory']);
    try {
      expect(s.output.indexOf(s.link)).toBeGreaterThan(s.output.indexOf(s.secrets[1] as string));
      expect(s.link.startsWith(`${s.url}/dashboard/sign-in?token=`)).toBe(true);
      const signedIn = await signIn(s.link);
      expect(signedIn).toMatchObject({ status: 303, location: '/dashboard/' });
      expect(signedIn.cookies.join('\n')).toMatch(/keygate_session=[^;]+;.*Path=\/dashboard.*HttpOnly/i);

      const list = await page(`${s.url}/dashboard/`, signedIn.cookie);
      expect(list.status).toBe(200);
      expect(list.html).toContain('<h1>API keys</h1>');
      for (const name of ['demo test', 'demo live']) expect(list.html).toContain(`>${name}</a>`);
      for (const secret of s.secrets) expect(list.html).toContain(keyHint(secret));
      expect(list.html).toContain(`<dt>Available balance</dt><dd>${DEMO_CREDITS.toLocaleString('en-US')} credits</dd>`);
      expect(list.html).toContain('<dt>Billed requests this month</dt><dd>0 (0 credits)</dd>');
      for (const secret of s.secrets) expect(list.html).not.toContain(secret);

      // A live request is billed: the panel shows it on the next visit.
      const verify = await fetch(`${s.url}/v1/email/verify`, {
        method: 'POST',
        headers: { 'x-api-key': s.secrets[1] as string, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ada@example.com' }),
      });
      expect(verify.status).toBe(200);
      const after = await page(`${s.url}/dashboard/`, signedIn.cookie);
      expect(after.html).toContain(`<dd>${(DEMO_CREDITS - 1).toLocaleString('en-US')} credits</dd>`);
      expect(after.html).toContain('<dt>Billed requests this month</dt><dd>1 (1 credit)</dd>');

      // The link was for one use.
      expect((await signIn(s.link)).status).toBe(401);
    } finally {
      await s.close();
    }
  });

  it("offers the service's permissions and a rate limit; a key revoked there is refused by the API at once", async () => {
    const s = await start(['--memory']);
    try {
      const { cookie } = await signIn(s.link);
      const form = await page(`${s.url}/dashboard/keys/new`, cookie);
      for (const permission of ['email:verify', 'email:score', 'contacts:find']) {
        expect(form.html).toContain(`value="${permission}"`);
      }
      expect(form.html).toContain('Rate limit');

      const live = s.secrets[1] as string;
      const account = () => fetch(`${s.url}/v1/account`, { headers: { 'x-api-key': live } });
      const keyId = (await (await account()).json()).key.id as string; // now in the API's key cache
      const confirm = await page(`${s.url}/dashboard/keys/${keyId}/revoke`, cookie);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(confirm.html)?.[1] ?? '';
      const revoked = await fetch(`${s.url}/dashboard/keys/${keyId}/revoke`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: s.url, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf, confirm: 'demo live' }),
      });
      expect(revoked.status).toBe(303);
      expect((await account()).status).toBe(401);
    } finally {
      await s.close();
    }
  });
});

describe('the dashboard behind a proxy', () => {
  it.each([
    ['no TRUST_PROXY: the header is ignored, the cookie is not Secure', {}, false],
    ['TRUST_PROXY=loopback (the test client plays the proxy): the cookie is Secure', { TRUST_PROXY: 'loopback' }, true],
  ])('X-Forwarded-Proto: https with %s', async (_, env, secure) => {
    const s = await start(['--memory'], env);
    try {
      const res = await fetch(s.link, { redirect: 'manual', headers: { 'x-forwarded-proto': 'https' } });
      expect(res.status).toBe(303);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('keygate_session=')) ?? '';
      expect(/;\s*Secure/i.test(cookie)).toBe(secure);
    } finally {
      await s.close();
    }
  });
});

describe('the dashboard secret', PGLITE, () => {
  it('is generated on the first start into <data-dir>/dashboard-secret (0600) and reused by later starts', async () => {
    const dir = await tempDir();
    const file = join(dir, 'dashboard-secret');
    const first = await start(['--data-dir', dir]);
    let kept: string;
    let unusedLink: string;
    try {
      kept = (await readFile(file, 'utf8')).trim();
      expect(kept).toMatch(/^[0-9a-f]{64}$/);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(first.output).toContain(`secret kept in ${file}`);
      expect(first.output).toContain(
        `dashboard link --account acct_demo --base-url ${first.url} --store pglite:${dir}`,
      );
      unusedLink = first.link;
    } finally {
      await first.close();
    }

    const second = await start(['--data-dir', dir]);
    try {
      expect((await readFile(file, 'utf8')).trim()).toBe(kept);
      // Every start prints a new link, and one printed before the restart still signs in (same secret).
      expect(second.link).not.toBe(unusedLink);
      const old = new URL(unusedLink);
      const signedIn = await signIn(`${second.url}${old.pathname}${old.search}`);
      expect(signedIn.status).toBe(303);
      const list = await page(`${second.url}/dashboard/`, signedIn.cookie);
      expect(list.html).toContain('>demo live</a>');
    } finally {
      await second.close();
    }

    // KEYGATE_DASHBOARD_SECRET wins and leaves the file alone.
    const third = await start(['--data-dir', dir], { KEYGATE_DASHBOARD_SECRET: SECRET });
    try {
      expect(third.output).toContain('secret from KEYGATE_DASHBOARD_SECRET');
      expect((await readFile(file, 'utf8')).trim()).toBe(kept);
      const baseUrl = third.url;
      const withEnv = await createSignInLink({
        secret: SECRET,
        accountId: 'acct_demo',
        baseUrl,
        basePath: '/dashboard',
      });
      const withFile = await createSignInLink({
        secret: kept,
        accountId: 'acct_demo',
        baseUrl,
        basePath: '/dashboard',
      });
      expect((await signIn(withEnv)).status).toBe(303);
      expect((await signIn(withFile)).status).toBe(401);
    } finally {
      await third.close();
    }
  });

  it('refuses to start on a secret file that holds less than 32 bytes, naming the file', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'dashboard-secret'), 'too short\n', { mode: 0o600 });
    const started = main({ argv: ['--data-dir', dir], env: { PORT: '0' }, log: () => {} });
    await expect(started).rejects.toMatchObject({ code: 'invalid_setting', setting: 'KEYGATE_DASHBOARD_SECRET' });
    await expect(started).rejects.toThrow(join(dir, 'dashboard-secret'));
  });

  it.each([['short'], [''], ['x'.repeat(31)]])(
    'KEYGATE_DASHBOARD_SECRET=%j (under 32 bytes) refuses to start before any store opens',
    async (value) => {
      const dir = join(await tempDir(), 'store');
      const started = main({
        argv: ['--data-dir', dir],
        env: { PORT: '0', KEYGATE_DASHBOARD_SECRET: value },
        log: () => {},
      });
      await expect(started).rejects.toMatchObject({ code: 'invalid_setting', setting: 'KEYGATE_DASHBOARD_SECRET' });
      await expect(started).rejects.toThrow(/at least 32 bytes/);
      expect(existsSync(dir)).toBe(false);
    },
  );

  it('with --memory lives in memory: nothing is written, and each start signs with a new one', async () => {
    const dir = join(await tempDir(), 'never');
    const first = await start(['--memory', '--data-dir', dir]);
    const firstLink = first.link;
    await first.close();
    const second = await start(['--memory', '--data-dir', dir]);
    try {
      expect(second.output).toContain('secret in memory for this run');
      expect(existsSync(dir)).toBe(false);
      const old = new URL(firstLink);
      expect((await signIn(`${second.url}${old.pathname}${old.search}`)).status).toBe(401);
      expect((await signIn(second.link)).status).toBe(303);
    } finally {
      await second.close();
    }
  });

  it.skipIf(!pgUp)(
    'with DATABASE_URL and no KEYGATE_DASHBOARD_SECRET is generated per start, and the log says links die with the process',
    async () => {
      // A database of its own: the example keeps its tables in the public schema.
      const database = `keygate_example_${RUN_ID}`;
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
      const url = new URL(PG_URL);
      url.pathname = `/${database}`;
      try {
        const s = await start([], { DATABASE_URL: url.href });
        try {
          expect(s.output).toMatch(/secret generated for this process.*die with the process/);
          expect(s.output).not.toContain('dashboard link --account'); // the CLI cannot know this secret
          expect((await signIn(s.link)).status).toBe(303);
        } finally {
          await s.close();
        }
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await admin.end();
      }
    },
  );
});

/** Holds `amount` of `accountId` and settles it (a billed request) or releases it (one that failed). */
async function request(ledger: CreditLedger, accountId: string, amount: number, outcome: 'settle' | 'release') {
  const held = await ledger.hold(accountId, amount, { keyId: 'key_1' });
  if (!held.ok) throw new Error('the test account cannot cover the hold');
  await (outcome === 'settle' ? ledger.settle(held.holdId) : ledger.release(held.holdId));
}

describe.each([
  ['MemoryCreditLedger', async () => ({ ledger: new MemoryCreditLedger(), close: async () => {} })],
  [
    'PostgresCreditLedger on PGlite',
    async () => {
      const client = new PGlite();
      const ledger = new PostgresCreditLedger({ client });
      await ledger.migrate();
      return { ledger, close: () => client.close() };
    },
  ],
])('the account panel over a %s', PGLITE, (_, open) => {
  it("shows the balance and this month's charges: released holds and top-ups are not billed requests", async () => {
    const { ledger, close } = await open();
    try {
      await ledger.topUp('acct_1', 100);
      await ledger.topUp('acct_2', 100);
      await request(ledger, 'acct_1', 1, 'settle');
      await request(ledger, 'acct_1', 5, 'settle');
      await request(ledger, 'acct_1', 7, 'release');
      await request(ledger, 'acct_2', 3, 'settle');
      expect(await accountPanel(ledger)('acct_1')).toEqual([
        { label: 'Billed requests this month', value: '2 (6 credits)' },
      ]);
      expect((await accountPanel(ledger)('acct_2'))[0]?.value).toBe('1 (3 credits)');
      expect(await accountPanel(ledger)('acct_unknown')).toEqual([
        { label: 'Billed requests this month', value: '0 (0 credits)' },
      ]);
      // Next month, none of them counts.
      const nextMonth = new Date();
      nextMonth.setUTCMonth(nextMonth.getUTCMonth() + 1, 1);
      expect((await accountPanel(ledger, () => nextMonth.getTime())('acct_1'))[0]?.value).toBe('0 (0 credits)');
    } finally {
      await close();
    }
  });
});

it('the account panel says "at least" when the month holds more entries than it reads', async () => {
  const ledger = new MemoryCreditLedger();
  await ledger.topUp('acct_1', 10_000);
  for (let i = 0; i < PANEL_ENTRIES; i++) await request(ledger, 'acct_1', 1, 'settle');
  expect((await accountPanel(ledger)('acct_1'))[0]?.value).toBe(
    `at least ${(PANEL_ENTRIES).toLocaleString('en-US')} (${PANEL_ENTRIES.toLocaleString('en-US')} credits)`,
  );
});
