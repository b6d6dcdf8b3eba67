// `npm start`: the e-mail verification service on PGlite in ./.keygate (state survives restarts),
// `--memory` for a throw-away run, DATABASE_URL for PostgreSQL. The first start creates a demo
// account with credits and prints its two keys, once; every start prints a one-time sign-in link to
// the developer dashboard at /dashboard.
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { capabilityOf, KeyManager, UsageRecorder } from 'keygate';
import { githubSecretScanning } from 'keygate/leaks';
import { createWebhookDispatcher } from 'keygate/webhooks';
import { createApp, PRICES } from './app.js';
import { createDashboard, dashboardWelcome, loadDashboardSecret } from './dashboard.js';
import { databaseUrlOf } from './database-url.js';
import { prometheusMetrics } from './metrics.js';
import { dashboardSecretOf, portOf, SettingError, trustProxyOf } from './settings.js';
import { openStores } from './stores.js';

/** The account `npm start` creates on first start, and its starting balance in credits. */
export const DEMO_ACCOUNT = 'acct_demo';
export const DEMO_CREDITS = 1000;
/**
 * The reference of the demo account's starting top-up: a top-up with a reference the account has
 * already used credits nothing, so every start can ask for it and the account gets it once.
 */
export const DEMO_TOP_UP = 'demo-starting-credits';
const PERMISSIONS = ['email:verify', 'email:score', 'contacts:find'];
/**
 * Rate limits per key, in requests (a batch: its addresses) per minute: the demo keys' own (test keys
 * lower than live, each above the largest batch of 100), and the one of keys created without a limit.
 */
export const RATE_LIMITS = Object.freeze({
  test: Object.freeze({ limit: 200, windowMs: 60_000 }),
  live: Object.freeze({ limit: 1000, windowMs: 60_000 }),
  default: Object.freeze({ limit: 200, windowMs: 60_000 }),
});

export const USAGE = `Usage: node examples/email-verification/server.js [--memory] [--data-dir DIR] [--new-keys]
  --memory        keys and balances in memory: fresh demo keys on every start
  --data-dir DIR  PGlite folder (default ./.keygate); ignored with --memory or DATABASE_URL
  --new-keys      create and print a new pair of demo keys even though some exist
Environment: PORT (default 3000), HOST (default 127.0.0.1), DATABASE_URL (PostgreSQL instead of PGlite),
  TRUST_PROXY (the proxy in front, whose X-Forwarded-For counts: its addresses or CIDRs, comma-separated, or
    loopback; default none. A hop count or true only with a loopback HOST; ranges at most a /8 of public
    addresses), DNS_TIMEOUT_MS (default 3000),
  KEYGATE_DASHBOARD_SECRET (32+ bytes; default: generated once and kept in DIR/dashboard-secret),
  KEYGATE_LEAKS_PUBLIC_KEYS_URL (where POST /github/secret-scanning reads the signing keys; default GitHub's;
    \`keygate leaks drill\` serves its own on http://127.0.0.1:7357/),
  KEYGATE_WEBHOOKS_ALLOW_PRIVATE_NETWORKS=1 (development: send webhooks to a receiver on this machine)`;

/**
 * Starts the service and returns once it listens.
 *
 * @param {object} [options]
 * @param {string[]} [options.argv] command-line arguments. Default `process.argv.slice(2)`
 * @param {Record<string, string | undefined>} [options.env] default `process.env`
 * @param {(line: string) => void} [options.log] where the start-up message goes. Default `console.log`
 * @param {import('./mx.js').MxResolver} [options.resolver] DNS for live keys. Default: the system resolver
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 * @example
 * const { url, close } = await main({ argv: ['--memory'], env: { PORT: '0' } });
 */
export async function main({ argv = process.argv.slice(2), env = process.env, log = console.log, resolver } = {}) {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      memory: { type: 'boolean', default: false },
      'data-dir': { type: 'string', default: './.keygate' },
      'new-keys': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const port = portOf(env.PORT);
  const host = env.HOST ?? '127.0.0.1';
  // Before any store opens: an unsafe proxy setting never starts the service.
  const trustProxy = trustProxyOf(env.TRUST_PROXY, host);
  const givenSecret = dashboardSecretOf(env.KEYGATE_DASHBOARD_SECRET);
  const databaseUrl = args.memory ? undefined : databaseUrlOf(env.DATABASE_URL);

  const stores = await openStores({ memory: args.memory, databaseUrl, dataDir: args['data-dir'] });
  let server;
  /** @type {UsageRecorder | undefined} */
  let usage;
  /** @type {import('keygate/webhooks').WebhookDispatcher | undefined} */
  let dispatcher;
  try {
    const keys = new KeyManager({ store: stores.store });
    const demo = await seed(keys, stores.ledger, args['new-keys']);
    // Key events go into the store's outbox with each key write (PGlite, PostgreSQL; not --memory):
    // this sends them to the endpoints `keygate webhooks add` registered, signed, retried on failure.
    const outbox = capabilityOf(stores.store, 'outbox');
    // Only public addresses, unless the developer running the demo lets it reach a local receiver.
    const allowPrivateNetworks = env.KEYGATE_WEBHOOKS_ALLOW_PRIVATE_NETWORKS === '1';
    dispatcher = outbox ? createWebhookDispatcher({ outbox, allowPrivateNetworks }) : undefined;
    dispatcher?.start({ intervalMs: 2_000, onError: (err) => log(`webhooks: ${err}`) });
    const metrics = prometheusMetrics();
    usage = new UsageRecorder({ store: stores.store, telemetry: metrics.telemetry });
    const database = databaseUrl !== undefined;
    const dataDir = args.memory || database ? null : args['data-dir'];
    const secret = await loadDashboardSecret({ given: givenSecret, dataDir, database });
    const ui = createDashboard({
      store: stores.store,
      dashboardStore: stores.dashboardStore,
      ledger: stores.ledger,
      secret: secret.secret,
      permissions: PERMISSIONS,
      usage,
    });
    // GitHub's secret scanning reports: a live key found in public is suspended, a test key reported.
    const leaks = githubSecretScanning({
      manager: new KeyManager({ store: stores.store }),
      ...(env.KEYGATE_LEAKS_PUBLIC_KEYS_URL ? { publicKeysUrl: env.KEYGATE_LEAKS_PUBLIC_KEYS_URL } : {}),
      onEvent: (e) => {
        if (e.type === 'key.leaked') log(`key ${e.keyId} (${e.hint}) reported leaked at ${e.url}: ${e.action}`);
      },
    });
    const app = createApp({
      leaks,
      dashboard: ui,
      usage,
      telemetry: metrics.telemetry,
      metricsHandler: metrics.handler,
      store: stores.store,
      ledger: stores.ledger,
      rateLimiter: stores.limiter,
      defaultRateLimit: RATE_LIMITS.default,
      resolver,
      trustProxy,
      dnsTimeoutMs: env.DNS_TIMEOUT_MS ? Number(env.DNS_TIMEOUT_MS) : undefined,
    });
    server = app.listen(port, host);
    await once(server, 'listening').catch((/** @type {NodeJS.ErrnoException} */ err) => {
      throw err.code === 'EADDRINUSE'
        ? new SettingError('PORT', `port ${port} is in use: set PORT to a free port (PORT=0 picks any)`)
        : err;
    });
    const { port: actual } = /** @type {import('node:net').AddressInfo} */ (server.address());
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    const url = `http://${shown}:${actual}`;
    log(`keygate e-mail verification service on ${url} (keys and balances ${stores.describe})`);
    log(welcome({ url, ...demo, cliStore: stores.cliStore }));
    log(await dashboardWelcome({ ui, url, accountId: DEMO_ACCOUNT, secret, cliStore: stores.cliStore }));
    const listening = server;
    return {
      url,
      close: async () => {
        listening.closeAllConnections();
        await new Promise((resolve) => listening.close(resolve));
        await dispatcher?.stop();
        await usage?.close(); // the last counts, before the store goes
        await stores.close();
      },
    };
  } catch (err) {
    server?.close();
    await dispatcher?.stop();
    await usage?.close().catch(() => {});
    await stores.close();
    throw err;
  }
}

/**
 * Tops the demo account up with its starting credits (once: the top-up's reference makes a restart
 * credit nothing) and creates its keys (when it has no active key, or when asked).
 *
 * @param {KeyManager} keys
 * @param {import('keygate').CreditLedger} ledger
 * @param {boolean} newKeys
 */
async function seed(keys, ledger, newKeys) {
  await ledger.topUp(DEMO_ACCOUNT, DEMO_CREDITS, { reference: DEMO_TOP_UP });
  const existing = (await keys.list(DEMO_ACCOUNT)).filter((k) => k.status === 'active');
  const created = [];
  if (existing.length === 0 || newKeys) {
    for (const mode of /** @type {const} */ (['test', 'live'])) {
      created.push(
        await keys.create({
          accountId: DEMO_ACCOUNT,
          name: `demo ${mode}`,
          mode,
          permissions: PERMISSIONS,
          rateLimit: RATE_LIMITS[mode],
        }),
      );
    }
  }
  return { created, existing, balance: await ledger.balance(DEMO_ACCOUNT) };
}

/** How many existing keys a start lists, newest first; more are counted, and the CLI lists them all. */
const LISTED_KEYS = 5;

/**
 * What a CLI line needs said when the CLI must wait for the server: a PGlite folder has one process
 * at a time (the running service holds it); PostgreSQL serves both at once.
 *
 * @param {string} cliStore the `--store` value
 */
function stopFirst(cliStore) {
  return cliStore.startsWith('pglite:') ? ' (with the server stopped: it holds the PGlite folder)' : '';
}

/**
 * The start-up message: new keys with working curl lines, or, when the keys already exist, their
 * hints and how to get new ones (a secret is shown only when it is created).
 *
 * @param {{ url: string, created: import('keygate').CreatedKey[], existing: import('keygate').ManagedKey[], balance: number, cliStore: string | null }} state
 */
function welcome({ url, created, existing, balance, cliStore }) {
  const lines = [
    `Demo account ${DEMO_ACCOUNT}: ${balance} credits (verify ${PRICES.verify}, score ${PRICES.score}, contacts/find ${PRICES.find} per item).`,
  ];
  const test = created.find((k) => k.key.mode === 'test');
  const live = created.find((k) => k.key.mode === 'live');
  if (test && live) {
    /** @param {string} key @param {string} path @param {Record<string, string>} body */
    const post = (key, path, body) =>
      `curl -s ${url}${path} -H 'x-api-key: ${key}' -H 'content-type: application/json' -d '${JSON.stringify(body)}'`;
    lines.push(
      '',
      'New demo keys, shown this once (only their digests are stored):',
      `test key (sandbox answers, never billed; ${RATE_LIMITS.test.limit} requests a minute):`,
      test.secret,
      `live key (real checks: syntax, lists, DNS MX; billed from the balance; ${RATE_LIMITS.live.limit} requests a minute):`,
      live.secret,
      '',
      'Try them:',
      post(test.secret, '/v1/email/verify', { email: 'undeliverable@example.com' }),
      post(live.secret, '/v1/email/verify', { email: 'ada@gmail.com' }),
      post(live.secret, '/v1/contacts/find', { domain: 'example.com', firstName: 'Ada', lastName: 'Lovelace' }),
      `curl -s ${url}/v1/account -H 'x-api-key: ${live.secret}'`,
    );
  }
  if (existing.length > 0) {
    const newest = existing.slice(-LISTED_KEYS).reverse();
    lines.push(
      '',
      `${existing.length} active key${existing.length === 1 ? '' : 's'} already exist${existing.length === 1 ? 's' : ''} ` +
        '(secrets were printed when they were created and are not stored)' +
        (existing.length > newest.length ? `; the newest ${newest.length}:` : ':'),
      ...newest.map((k) => `  ${k.hint}  ${k.name}`),
    );
    if (existing.length > newest.length && cliStore) {
      lines.push(
        `  all of them: node dist/cli.js keys list --store ${cliStore} --account ${DEMO_ACCOUNT}${stopFirst(cliStore)}`,
      );
    }
    if (created.length === 0) {
      lines.push(
        'New keys: restart with `npm start -- --new-keys`',
        cliStore
          ? `  or: node dist/cli.js keys create --store ${cliStore} --account ${DEMO_ACCOUNT} --name mine --mode live --permission email:verify${stopFirst(cliStore)}`
          : '',
      );
    }
  }
  return lines.filter((line, i, all) => line !== '' || all[i - 1] !== '').join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let started;
  // What PGlite creates while the service runs is owner-only too (a start sets what is there to 0600).
  process.umask(0o077);
  try {
    started = await main();
  } catch (err) {
    // A setting (PORT, DATABASE_URL, ...) or a data folder another process holds is one line that says
    // what to do; a bad argument, that line and the usage; anything else, its stack.
    const code = /** @type {{ code?: unknown }} */ (err)?.code;
    const badArgument = err instanceof TypeError && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
    if (err instanceof SettingError) console.error(err.message);
    else if (code === 'store_locked') {
      console.error(
        `${/** @type {Error} */ (err).message}: stop that process first, or give this one another folder ` +
          '(npm start -- --data-dir DIR) or DATABASE_URL',
      );
    } else console.error(badArgument ? `${/** @type {Error} */ (err).message}\n${USAGE}` : err);
    process.exit(1);
  }
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    process.once(signal, () => {
      started.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}
