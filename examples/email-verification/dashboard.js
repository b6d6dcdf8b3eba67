// The developer dashboard at /dashboard: keygate/dashboard over the service's own keys, signed in with
// one-time links, with the account's credit balance and this month's billed requests in its account
// panel (from the credit ledger's entries).
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KeyManager } from 'keygate';
import { dashboard, SIGN_IN_LINK_TTL_MS } from 'keygate/dashboard';
import { MIN_DASHBOARD_SECRET_BYTES, SettingError } from './settings.js';

/** Where the service mounts the dashboard. */
export const DASHBOARD_PATH = '/dashboard';
/** The file in the data folder that keeps the generated dashboard secret (mode 0600). */
export const SECRET_FILE = 'dashboard-secret';

/**
 * The dashboard secret and where it came from: `env` (KEYGATE_DASHBOARD_SECRET), `file` (kept in the
 * data folder), `memory` (a `--memory` run) or `process` (PostgreSQL without the variable).
 *
 * @typedef {{ secret: string, source: 'env' | 'file' | 'memory' | 'process', file?: string }} DashboardSecret
 */

/**
 * The dashboard secret for this start: `given` (KEYGATE_DASHBOARD_SECRET, already checked) when set;
 * else the one kept in `<dataDir>/dashboard-secret`, generated on the first start; else, without a
 * data folder, 32 random bytes for this process alone (links and sessions then end with it).
 *
 * @param {{ given: string | undefined, dataDir: string | null, database: boolean }} where `dataDir` is the
 *   PGlite folder (owner-only, already created) or null; `database` is true on PostgreSQL (DATABASE_URL)
 * @returns {Promise<DashboardSecret>}
 * @example
 * const { secret } = await loadDashboardSecret({ given: undefined, dataDir: './.keygate', database: false });
 */
export async function loadDashboardSecret({ given, dataDir, database }) {
  if (given !== undefined) return { secret: given, source: 'env' };
  if (dataDir === null) return { secret: randomSecret(), source: database ? 'process' : 'memory' };
  const file = join(dataDir, SECRET_FILE);
  return { secret: await keptSecret(file), source: 'file', file };
}

function randomSecret() {
  return randomBytes(32).toString('hex');
}

/**
 * Reads the secret kept in `file`, or writes a new one there (0600) when there is none. The file is
 * written beside and renamed into place, so a crash never leaves a half-written secret; the service
 * holds the folder's lock, so no other start races this one.
 *
 * @param {string} file
 */
async function keptSecret(file) {
  let text;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (/** @type {{ code?: string }} */ (err)?.code !== 'ENOENT') throw err;
    const secret = randomSecret();
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      await writeFile(temporary, `${secret}\n`, { mode: 0o600, flag: 'wx' });
      await rename(temporary, file);
    } finally {
      await rm(temporary, { force: true });
    }
    return secret;
  }
  const secret = text.trim();
  if (Buffer.byteLength(secret, 'utf8') < MIN_DASHBOARD_SECRET_BYTES) {
    throw new SettingError(
      'KEYGATE_DASHBOARD_SECRET',
      `${file} holds no usable dashboard secret (fewer than ${MIN_DASHBOARD_SECRET_BYTES} bytes). Delete it and ` +
        'start again to have a new one generated (links and sessions signed with the old one stop working).',
    );
  }
  return secret;
}

/** The most ledger entries the account panel reads (the most one `entries` call returns). */
export const PANEL_ENTRIES = 1000;

/**
 * The account panel of the dashboard: this month's billed requests (UTC calendar month; the balance
 * and the latest entries are the dashboard's own Credits section), read from the ledger's latest entries: one `charge` entry per billed request (a
 * request that failed with a 5xx was released and wrote none; top-ups are not requests). A month with
 * more than {@link PANEL_ENTRIES} entries shows "at least" what the latest of them hold.
 *
 * @param {import('keygate').CreditLedger} ledger
 * @param {() => number} [clock] epoch milliseconds. Default `Date.now`
 * @returns {(accountId: string) => Promise<Array<{ label: string, value: string }>>}
 * @example
 * await accountPanel(ledger)('acct_demo'); // [{ label: 'Billed requests this month', value: '6 (6 credits)' }]
 */
export function accountPanel(ledger, clock = Date.now) {
  const number = new Intl.NumberFormat('en-US');
  /** @param {number} n */
  const credits = (n) => `${number.format(n)} credit${n === 1 ? '' : 's'}`;
  return async (accountId) => {
    const now = new Date(clock());
    const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const entries = await ledger.entries(accountId, { limit: PANEL_ENTRIES });
    // Newest first: the month is complete once an older entry shows, or when the ledger had no more.
    let complete = entries.length < PANEL_ENTRIES;
    let requests = 0;
    let charged = 0;
    for (const entry of entries) {
      if (Date.parse(entry.createdAt) < monthStart) {
        complete = true;
        break;
      }
      if (entry.kind !== 'charge') continue;
      requests++;
      charged -= entry.amount; // a charge's amount is negative
    }
    return [
      {
        label: 'Billed requests this month',
        value: `${complete ? '' : 'at least '}${number.format(requests)} (${credits(charged)})`,
      },
    ];
  };
}

/**
 * The dashboard over the service's keys: permission checkboxes from the service's catalogue, the
 * "Rate limit" field, the Credits section (balance and latest entries) and the account panel over the ledger. Mount it with
 * `createApp({ dashboard: ui, ... })`.
 *
 * @param {object} options
 * @param {import('keygate').WritableKeyStore} options.store the service's key store
 * @param {import('keygate/dashboard').DashboardStore} options.dashboardStore the dashboard's own store over the same data
 * @param {import('keygate').CreditLedger} options.ledger the accounts' prepaid credits
 * @param {string} options.secret from {@link loadDashboardSecret}
 * @param {readonly string[]} options.permissions the permissions the service's routes check
 * @param {import('keygate').UsageRecorder} [options.usage] flushed before usage is shown, so the latest requests count
 * @returns {import('keygate/dashboard').Dashboard}
 * @example
 * const ui = createDashboard({ store, dashboardStore, ledger, secret, permissions: ['email:verify'] });
 */
export function createDashboard({ store, dashboardStore, ledger, secret, permissions, usage }) {
  return dashboard({
    manager: new KeyManager({ store, ...(usage ? { usage } : {}) }),
    store: dashboardStore,
    basePath: DASHBOARD_PATH,
    secret,
    permissions,
    rateLimits: true,
    credits: ledger,
    accountPanel: accountPanel(ledger),
  });
}

/**
 * The start-up lines about the dashboard: where it is, a one-time sign-in link for `accountId` on its
 * own line (links are short-lived and single-use, so every start prints a new one), and how to get
 * another while the service runs.
 *
 * @param {{ ui: import('keygate/dashboard').Dashboard, url: string, accountId: string, secret: DashboardSecret, cliStore: string | null }} state
 * @returns {Promise<string>}
 */
export async function dashboardWelcome({ ui, url, accountId, secret, cliStore }) {
  const link = await ui.signInLink({ accountId, baseUrl: url });
  const cli = `node dist/cli.js dashboard link --account ${accountId} --base-url ${url}`;
  const kept = {
    env: ['secret from KEYGATE_DASHBOARD_SECRET', `Another link, with KEYGATE_DASHBOARD_SECRET set: ${cli}`],
    file: [`secret kept in ${secret.file}`, `Another link while the service runs: ${cli} --store ${cliStore}`],
    memory: ['secret in memory for this run', 'Another link: restart the service.'],
    process: [
      'secret generated for this process: DATABASE_URL without KEYGATE_DASHBOARD_SECRET, so sign-in links ' +
        'and sessions die with the process. Set KEYGATE_DASHBOARD_SECRET (32+ random bytes) to keep them',
      'Another link: restart the service.',
    ],
  }[secret.source];
  return [
    '',
    `Dashboard: ${url}${DASHBOARD_PATH} (${kept[0]}).`,
    `Sign in as ${accountId} with this one-time link (valid ${SIGN_IN_LINK_TTL_MS / 60_000} minutes, usable once; every start prints a new one):`,
    link,
    kept[1],
  ].join('\n');
}
