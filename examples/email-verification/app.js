// The e-mail verification API: keygate decides who may call what and holds what the call costs from
// the account's prepaid credits (402 when they cannot cover it), and only then does the work run; the
// hold is settled when the answer goes out, or released on a 5xx. Test keys get the sandbox and never
// reach the ledger.
import express from 'express';
import { CachedKeyStore, KeyManager, MemoryRateLimiter } from 'keygate';
import { toNodeHandler } from 'keygate/dashboard';
import { apiKeyAuth } from 'keygate/express';
import { parseAddress } from './address.js';
import { candidates } from './contacts.js';
import { deniedOnly } from './denied-only.js';
import { createMxLookup } from './mx.js';
import { InvalidRequest, sendProblem } from './problem.js';
import { sandboxMx, sandboxVerify } from './sandbox.js';
import { batchCost, costOf, one, parseBatchBody, parseEmailBody, parseFindBody } from './validate.js';
import { invalid, judge, scoreOf, verifyAddress } from './verify.js';

/** Credits per processed item. A batch costs `verify` per address; a contacts search costs `find` once. */
export const PRICES = Object.freeze({ verify: 1, score: 1, find: 5 });
/** Largest accepted request body (express.json `limit`). */
export const BODY_LIMIT = '100kb';
/** How many of the account's latest ledger entries `GET /v1/account` shows. */
export const ACCOUNT_ENTRIES = 10;

/**
 * Builds the service. Nothing listens yet: `app.listen(port)` or `http.createServer(app)`.
 *
 * @param {object} options
 * @param {import('keygate').KeyStore} options.store where keys are looked up; wrapped in a `CachedKeyStore` unless `cache` is false
 * @param {import('keygate').CreditLedger} options.ledger the accounts' prepaid credits: a `MemoryCreditLedger`, `PostgresCreditLedger` or `RedisCreditLedger`
 * @param {import('./mx.js').MxResolver} [options.resolver] DNS for live keys. Default: the system resolver
 * @param {number} [options.dnsTimeoutMs] milliseconds per domain before an answer is `unknown`. Default `3000`
 * @param {Partial<typeof PRICES>} [options.prices] default {@link PRICES}
 * @param {boolean | string | number} [options.trustProxy] Express `trust proxy`. Default `false`: the peer address is the client
 * @param {boolean} [options.cache] cache key lookups. Default `true`
 * @param {import('keygate').UsageRecorder} [options.usage] counts every request per key; `GET /v1/account` then reports the calling key's usage. Default: none
 * @param {import('keygate').TelemetryOptions} [options.telemetry] where keygate reports its metrics. Default: none
 * @param {(req: import('express').Request, res: import('express').Response) => void} [options.metricsHandler] answers `GET /metrics`. Default: no such route
 * @param {import('keygate').RateLimiter} [options.rateLimiter] counts each key's rate limit. Default: a `MemoryRateLimiter` (exact for one process)
 * @param {import('keygate').RateLimit} [options.defaultRateLimit] the limit of keys without one of their own. Default: none (such keys are not limited)
 * @param {(err: unknown) => void} [options.onError] unexpected errors (answered 500). Default `console.error`
 * @param {import('keygate/dashboard').Dashboard} [options.dashboard] the developer dashboard, mounted at its `basePath` (Express's `trust proxy` decides its client address and scheme). Default: none
 * @param {(request: Request) => Promise<Response>} [options.leaks] GitHub's secret scanning reports (`githubSecretScanning` of `keygate/leaks`), mounted at `POST /github/secret-scanning`. Default: none
 * @returns {import('express').Express}
 * @example
 * const app = createApp({ store: new MemoryKeyStore(), ledger: new MemoryCreditLedger() });
 * app.listen(3000);
 */
export function createApp({
  store,
  ledger,
  resolver,
  dnsTimeoutMs = 3000,
  prices: priceOverrides = {},
  trustProxy = false,
  cache = true,
  usage,
  telemetry,
  metricsHandler,
  rateLimiter = new MemoryRateLimiter(),
  defaultRateLimit,
  onError = console.error,
  dashboard,
  leaks,
}) {
  const prices = { ...PRICES, ...priceOverrides };
  const lookupMx = createMxLookup({ resolver, timeoutMs: dnsTimeoutMs });
  const keys = cache
    ? new CachedKeyStore(/** @type {import('keygate').WritableKeyStore} */ (store), { telemetry })
    : store;
  // Every route counts against the calling key's rate limit (one unit per request; a batch its size).
  const rateLimit = { limiter: rateLimiter, default: defaultRateLimit };
  /** A free route's key check. @param {string[]} permissions */
  const auth = (permissions) => apiKeyAuth({ store: keys, permissions, onResult: usage?.record, rateLimit, telemetry });
  // Per-key usage statistics for GET /v1/account, when the service counts them.
  const manager = usage
    ? new KeyManager({ store: /** @type {import('keygate').WritableKeyStore} */ (store), usage })
    : undefined;
  // After the key check, so an unauthenticated client cannot make the server read its body.
  const json = express.json({ limit: BODY_LIMIT });
  const beforeBody = deniedOnly(telemetry);
  /**
   * A billed route. Its cost (items × the operation's price) is known only once the body is read, and
   * the body is read only for a key that passed the checks. So the key is checked first (its denials
   * counted), the body parsed, then the key checked again with the cost (a cached lookup): that second
   * check counts the request and its rate limit, and holds the cost of a live key (402
   * `insufficient_credits` when the balance cannot cover it). keygate settles the hold once the
   * response is sent with a status below 500 and releases it on a 5xx, so a body that does not
   * validate costs 0 (no hold): its 400 must not be charged. Test keys never reach the ledger. The
   * first check's allows are neither counted in usage nor in telemetry: the second one counts them.
   *
   * @param {string[]} permissions
   * @param {keyof typeof PRICES} operation
   * @param {(body: unknown) => number} itemsOf the items a valid body carries; throws InvalidRequest for an invalid one
   * @param {(body: unknown) => number} [rateCost] rate-limit units the body costs. Default 1
   */
  const billedAuth = (permissions, operation, itemsOf, rateCost) => [
    apiKeyAuth({
      store: keys,
      permissions,
      onResult: usage && ((result, request) => (result.ok ? undefined : usage.record(result, request))),
      telemetry: beforeBody,
    }),
    json,
    apiKeyAuth({
      store: keys,
      permissions,
      onResult: usage?.record,
      rateLimit: rateCost ? { ...rateLimit, cost: ({ native }) => rateCost(native.body) } : rateLimit,
      credits: { ledger, cost: ({ native }) => costOf(native.body, itemsOf, prices[operation]) },
      telemetry,
    }),
  ];

  /**
   * Answers a billed route: the work's result, the key's mode, and what the request costs (`charged`,
   * settled as the response goes out) with the balance left after it. A test key: `{ charged: 0 }`.
   *
   * @param {import('express').Request} req
   * @param {import('express').Response} res
   * @param {object} result
   */
  function answer(req, res, result) {
    const key = /** @type {import('keygate').PublicKey} */ (req.apiKey);
    const held = req.apiKeyCredits;
    const billing = held ? { charged: held.cost, balance: held.balance } : { charged: 0 };
    res.json({ ...result, mode: key.mode, billing });
  }

  /** @param {import('express').Request} req */
  const isLive = (req) => req.apiKey?.mode === 'live';

  /** @param {string} email @param {boolean} live */
  const check = (email, live) => (live ? verifyAddress(email, lookupMx) : Promise.resolve(sandboxVerify(email)));

  const app = express();
  app.disable('x-powered-by');
  const routes = routeTable(app);
  app.set('trust proxy', trustProxy);
  // Before any body parser: the dashboard reads its own forms.
  if (dashboard) app.use(dashboard.basePath, toNodeHandler(dashboard));
  // Before any body parser too: the signature covers the raw body.
  if (leaks) app.post('/github/secret-scanning', toNodeHandler({ fetch: leaks }));

  routes.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  if (metricsHandler) routes.get('/metrics', metricsHandler);

  routes.post('/v1/email/verify', ...billedAuth(['email:verify'], 'verify', one(parseEmailBody)), async (req, res) => {
    const { email } = parseEmailBody(req.body);
    answer(req, res, await check(email, isLive(req)));
  });

  routes.post(
    '/v1/email/verify/batch',
    ...billedAuth(['email:verify'], 'verify', (body) => parseBatchBody(body).emails.length, batchCost),
    async (req, res) => {
      const { emails } = parseBatchBody(req.body);
      const results = await Promise.all(emails.map((email) => check(email, isLive(req))));
      answer(req, res, { count: results.length, results });
    },
  );

  routes.post('/v1/email/score', ...billedAuth(['email:score'], 'score', one(parseEmailBody)), async (req, res) => {
    const { email } = parseEmailBody(req.body);
    const item = await check(email, isLive(req));
    answer(req, res, { ...item, ...scoreOf(item) });
  });

  routes.post('/v1/contacts/find', ...billedAuth(['contacts:find'], 'find', one(parseFindBody)), async (req, res) => {
    const { asciiDomain: ascii, first, last } = parseFindBody(req.body);
    const mx = isLive(req) ? await lookupMx(ascii) : sandboxMx('found');
    const found = candidates(first, last).map(({ pattern, local }) => {
      const email = `${local}@${ascii}`;
      const parsed = parseAddress(email);
      const item = parsed.ok ? judge(email, parsed, mx) : invalid(email, parsed.reason);
      return { email, pattern, result: item.result, reason: item.reason };
    });
    answer(req, res, { domain: ascii, mx, candidates: found });
  });

  routes.get('/v1/account', auth([]), async (req, res) => {
    const key = /** @type {import('keygate').PublicKey} */ (req.apiKey);
    const [balance, entries, keyUsage] = await Promise.all([
      ledger.balance(key.accountId),
      ledger.entries(key.accountId, { limit: ACCOUNT_ENTRIES }),
      manager?.usage(key.id),
    ]);
    res.json({
      account: { id: key.accountId, balance, entries },
      key,
      usage: keyUsage,
      prices,
      mode: key.mode,
    });
  });

  app.use((req, res) => {
    const allowed = routes.methodsOf(req.path);
    if (allowed.length === 0) return sendProblem(res, 404, 'not_found', `There is no ${req.method} ${req.path}.`);
    res.set('allow', allowed.join(', '));
    if (req.method === 'OPTIONS') return res.status(204).end();
    sendProblem(res, 405, 'method_not_allowed', `${req.path} takes ${allowed.join(', ')}, not ${req.method}.`);
  });

  app.use(
    /** @type {import('express').ErrorRequestHandler} */
    (err, _req, res, _next) => {
      if (res.headersSent) return;
      if (err instanceof InvalidRequest)
        return sendProblem(res, 400, 'invalid_request', err.message, { field: err.field });
      const parserError = bodyParserProblem(err);
      if (parserError) return sendProblem(res, 400, 'invalid_request', parserError, { field: 'body' });
      onError(err);
      sendProblem(res, 500, 'internal_error', 'Something failed on our side; this request was not charged.');
    },
  );
  return app;
}

/**
 * Registers routes on `app` through `get` and `post`, remembering each path's methods, so a request
 * with another method gets 405 and an `Allow` header rather than 404. Paths match as Express matches
 * them by default: case-insensitively, a trailing slash ignored; a GET route answers HEAD too.
 *
 * @param {import('express').Express} app
 */
function routeTable(app) {
  /** @type {Map<string, string[]>} */
  const methods = new Map();
  /** @param {string} path */
  const normal = (path) => path.toLowerCase().replace(/(.)\/$/, '$1');
  /** @param {string} path @param {string[]} added */
  const note = (path, added) => methods.set(normal(path), [...(methods.get(normal(path)) ?? []), ...added]);
  return {
    /** @type {(path: string, ...handlers: import('express').RequestHandler[]) => void} */
    get(path, ...handlers) {
      note(path, ['GET', 'HEAD']);
      app.get(path, ...handlers);
    },
    /** @type {(path: string, ...handlers: import('express').RequestHandler[]) => void} */
    post(path, ...handlers) {
      note(path, ['POST']);
      app.post(path, ...handlers);
    },
    /** @param {string} path @returns {string[]} the methods `path` takes; none when it is no route */
    methodsOf: (path) => methods.get(normal(path)) ?? [],
  };
}

/**
 * What went wrong with the raw body, in words, or null for errors that are not body-parser's.
 *
 * @param {unknown} err
 */
function bodyParserProblem(err) {
  switch (/** @type {{ type?: string }} */ (err)?.type) {
    case 'entity.parse.failed':
      return 'The body is not valid JSON.';
    case 'entity.too.large':
      return `The body is larger than ${BODY_LIMIT}.`;
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return 'The body must be UTF-8 JSON, uncompressed or gzip/deflate/br.';
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return 'The body could not be read.';
    default:
      return null;
  }
}
