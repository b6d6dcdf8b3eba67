import { type AttemptThrottle, type CreditLedger, FailedAttemptThrottle, InvalidInputError, KeyManager } from 'keygate';
import { checkOptionNames, readAddress } from 'keygate/adapter-kit';
import type { DashboardStore } from 'keygate/store-kit';
import { createApp } from './app.js';
import type { AccountPanelEntry, Dash } from './context.js';
import { dashboardStoreOf } from './dashboard-store.js';
import { nodeClientAddress } from './node-address.js';
import { normalizeBasePath, under } from './paths.js';
import { createSigner, secretBytes } from './security/crypto.js';
import {
  positiveMs,
  SIGN_IN_LINK_TTL_MS,
  signInOrigin,
  signInUrl,
  signSignInToken,
  validAccountId,
} from './security/sign-in-token.js';

/** Options of {@link dashboard}. */
export interface DashboardOptions {
  /** The `KeyManager` whose keys the dashboard shows and changes. Its `onEvent` receives every `key.*` event. */
  manager: KeyManager;
  /**
   * The dashboard's own store, beside the manager's key store: pages of the key list, usage of many
   * keys, and the used sign-in links and ended sessions (so a link works once in every process).
   * `MemoryDashboardStore` (this module), `PostgresDashboardStore` (`keygate/postgres`, same client
   * and schema as the key store), `RedisDashboardStore` (`keygate/redis`, same client and prefix).
   * Default: a `MemoryDashboardStore` when the manager's store is a `MemoryKeyStore` (also under a
   * `CachedKeyStore`); with any other key store, leaving it out throws `InvalidInputError` naming `store`.
   *
   * @example
   * store: new PostgresDashboardStore({ client: pool, schema: 'keygate' }),
   */
  store?: DashboardStore;
  /** At least 32 bytes (e.g. 32 random bytes as hex). Signs sessions, CSRF tokens and sign-in links. */
  secret: string | Uint8Array;
  /** Where the dashboard is mounted, as the browser sees it. Default `'/'`. */
  basePath?: string;
  /**
   * The host's own login: the signed-in account of a request, or null when there is none (then a
   * one-time link session, if any, decides). Default: sign-in links only.
   */
  resolveAccount?: (request: Request) => string | null | undefined | Promise<string | null | undefined>;
  /** The permission catalogue: one checkbox per entry. Default: a text field, one permission per line. */
  permissions?: readonly string[];
  /** Show the "Rate limit" field (keys then carry `rateLimit: { limit, windowMs } | null`). Default `false`. */
  rateLimits?: boolean;
  /**
   * The account panel: label and value pairs the host shows in a section "Account" above the key list
   * (credit balance, plan, ...), both rendered as text (escaped). Called once per list page with the
   * signed-in account. When it throws, rejects or returns something other than an array of entries,
   * the section says the details are unavailable, the error goes to `onError`, and the page is still
   * a 200. Default: none (no section).
   *
   * @example
   * accountPanel: async (accountId) => [{ label: 'Credit balance', value: `${await ledger.balance(accountId)} credits` }],
   */
  accountPanel?: (
    accountId: string,
    request: Request,
  ) => readonly AccountPanelEntry[] | Promise<readonly AccountPanelEntry[]>;
  /**
   * The account's prepaid credits: with a ledger, the "API keys" page shows a section "Credits" with
   * the available balance and a table "Latest credit entries" (the 10 newest: date, kind, amount,
   * balance after, key, reference). The dashboard only reads it (`balance`, `entries`, and the
   * manager for key names); top-ups are the host's. When the ledger fails or times out, the section
   * says the balance is unavailable, the error goes to `onError`, and the page is still a 200.
   * Default: none (no section).
   *
   * @example
   * credits: new PostgresCreditLedger({ client: pool, schema: 'keygate' }), // the service's own ledger
   */
  credits?: CreditLedger;
  /**
   * The client address of a request, for sign-in throttling. Default: the address `toNodeHandler` and
   * `toFastifyPlugin` resolved (the framework's trust-proxy setting), else unknown (every unknown
   * address shares one throttling bucket).
   */
  clientIp?: (request: Request, ...rest: unknown[]) => string | null | undefined | Promise<string | null | undefined>;
  /** A session ends after this long without a request, in milliseconds. Default `3_600_000` (1 hour). */
  sessionIdleMs?: number;
  /** A session ends this long after sign-in whatever happens, in milliseconds. Default `43_200_000` (12 hours). */
  sessionAbsoluteMs?: number;
  /**
   * Throttles failed sign-in links per client address: once an address is over the limit, its bad
   * links get 429 with `Retry-After` (seconds), while a valid, unused link still signs in, so one
   * person behind a shared proxy cannot lock out the others. Default: 20 failures per address per
   * 15 minutes, in this process, on `clock`.
   */
  signInThrottle?: AttemptThrottle;
  /** Current time in epoch milliseconds. Default `Date.now`. */
  clock?: () => number;
  /** Told about unexpected errors (answered with a plain 500 page). Default: `console.error`. */
  onError?: (err: unknown) => void;
}

// Every member of {@link DashboardOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({
  manager: true,
  store: true,
  secret: true,
  basePath: true,
  resolveAccount: true,
  permissions: true,
  rateLimits: true,
  accountPanel: true,
  credits: true,
  clientIp: true,
  sessionIdleMs: true,
  sessionAbsoluteMs: true,
  signInThrottle: true,
  clock: true,
  onError: true,
} satisfies Record<keyof DashboardOptions, true>);

/** The mounted dashboard: a Fetch handler and a maker of one-time sign-in links. */
export interface Dashboard {
  /**
   * Answers one request: `(request, ...rest) => Promise<Response>`, bound, so it can be passed as is
   * (`export default { fetch: ui.fetch }`, `app.mount('/dashboard', ui.fetch)`).
   */
  readonly fetch: (request: Request, ...rest: unknown[]) => Promise<Response>;
  /** A one-time sign-in link for `accountId` (15 minutes, single use). `baseUrl` is the origin, e.g. `'https://example.com'`. */
  signInLink(options: { accountId: string; baseUrl: string }): Promise<string>;
  /** Where the dashboard is mounted, normalised (`'/'` or `'/dashboard'`). */
  readonly basePath: string;
}

function checkManager(manager: unknown): KeyManager {
  if (!(manager instanceof KeyManager))
    throw new InvalidInputError('manager', "manager must be a KeyManager from 'keygate'");
  return manager;
}

function optionalFunction<T>(field: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== 'function')
    throw new InvalidInputError(field, `${field} must be a function`);
  return value;
}

// A ledger is an object the section can read balances and entries from; anything else is a mistake.
function creditsOf(value: unknown): CreditLedger | undefined {
  if (value === undefined) return undefined;
  const ledger = value as Partial<CreditLedger> | null;
  if (typeof ledger?.balance !== 'function' || typeof ledger.entries !== 'function') {
    throw new InvalidInputError(
      'credits',
      "credits must be a CreditLedger (MemoryCreditLedger, or PostgresCreditLedger / RedisCreditLedger from 'keygate/postgres' / 'keygate/redis')",
    );
  }
  return value as CreditLedger;
}

function catalogueOf(value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((p) => typeof p !== 'string' || p === '')) {
    throw new InvalidInputError('permissions', 'permissions must be an array of permission names');
  }
  return Object.freeze([...new Set(value as string[])]);
}

/** The settled options every route shares. */
function settle(options: DashboardOptions): Dash {
  checkOptionNames(options, OPTION_NAMES, 'dashboard');
  const manager = checkManager(options?.manager);
  const basePath = normalizeBasePath(options.basePath);
  const clientIp = optionalFunction('clientIp', options.clientIp);
  const idleMs = positiveMs('sessionIdleMs', options.sessionIdleMs, 3_600_000);
  const absoluteMs = positiveMs('sessionAbsoluteMs', options.sessionAbsoluteMs, 43_200_000);
  const clock = optionalFunction('clock', options.clock) ?? Date.now;
  return {
    manager,
    basePath,
    signer: createSigner(secretBytes(options.secret)),
    store: dashboardStoreOf(options.store, manager),
    times: { idleMs, absoluteMs },
    catalogue: catalogueOf(options.permissions),
    rateLimits: options.rateLimits === true,
    accountPanel: optionalFunction('accountPanel', options.accountPanel),
    credits: creditsOf(options.credits),
    resolveAccount: optionalFunction('resolveAccount', options.resolveAccount),
    clientIp: async (request, rest) =>
      (clientIp ? await readAddress(clientIp, request, ...rest) : nodeClientAddress(request)) ?? undefined,
    throttle: options.signInThrottle ?? new FailedAttemptThrottle({ max: 20, windowMs: SIGN_IN_LINK_TTL_MS, clock }),
    clock,
    onError: optionalFunction('onError', options.onError) ?? ((err) => console.error('keygate dashboard:', err)),
    path: (inner) => under(basePath, inner),
  };
}

/**
 * The developer dashboard: a server-rendered web app (no client JavaScript needed) where the people
 * of an account create, change, rotate and revoke their keys, set allow lists and watch usage. A
 * Fetch handler on web standards: mount it in Hono, a Worker, Deno or Bun as is, and in Express or
 * Fastify through {@link toNodeHandler} / {@link toFastifyPlugin}.
 *
 * @example
 * const ui = dashboard({ manager: keys, basePath: '/dashboard', secret: process.env.KEYGATE_DASHBOARD_SECRET! });
 * app.mount('/dashboard', ui.fetch);                                    // Hono
 * console.log(await ui.signInLink({ accountId: 'acct_1', baseUrl: 'http://localhost:3000' }));
 */
export function dashboard(options: DashboardOptions): Dashboard {
  const dash = settle(options);
  const app = createApp(dash);
  return Object.freeze({
    basePath: dash.basePath,
    fetch: (request: Request, ...rest: unknown[]) => Promise.resolve(app.fetch(request, { rest })),
    async signInLink(link: { accountId: string; baseUrl: string }) {
      const accountId = validAccountId(link?.accountId);
      const token = await signSignInToken(dash.signer, accountId, dash.clock() + SIGN_IN_LINK_TTL_MS);
      return signInUrl(signInOrigin(link.baseUrl), dash.basePath, token);
    },
  });
}
