// keygate on Cloudflare Workers with Hono: keys kept in D1 and read through a KV cache whose staleness
// is bounded (maxStaleMs, 30 s by default), rate limits and credits kept by Durable Objects (one object per key for its limit, one per account for its credits: exact across
// every colo and isolate). The demo key comes from a secret:
//   wrangler secret put KEYGATE_DEMO_KEY   (locally: KEYGATE_DEMO_KEY=mk_test_... in .dev.vars)
import { Hono } from 'hono';
import { getConnInfo } from 'hono/cloudflare-workers';
import { KeyManager } from 'keygate';
import { D1KeyStore, DurableObjectCreditLedger, DurableObjectRateLimiter } from 'keygate/cloudflare';
import { apiKeyAuth } from 'keygate/hono';

// The Durable Object classes wrangler.toml binds: a Worker exports the classes it declares.
export { KeygateCreditObject, KeygateRateLimitObject } from 'keygate/cloudflare';

/**
 * @typedef {{
 *   KEYGATE_DEMO_KEY: string,
 *   KEYGATE_DEMO_CREDITS: string,
 *   KEYGATE_RATE_LIMIT_PER_MINUTE: string,
 *   DB: import('keygate/cloudflare').D1Like,
 *   KEYS: import('keygate/cloudflare').KVLike,
 *   KEYGATE_LIMITS: import('keygate/cloudflare').DurableObjectNamespaceLike,
 *   KEYGATE_CREDITS: import('keygate/cloudflare').DurableObjectNamespaceLike,
 * }} Bindings
 * @typedef {{ Bindings: Bindings } & import('keygate/hono').ApiKeyEnv} Env
 */

/** @type {D1KeyStore | undefined} */
let store;
/** @type {DurableObjectCreditLedger | undefined} */
let ledger;
/** @type {Promise<unknown> | undefined} */
let seeded;
/** @type {import('hono').MiddlewareHandler<Env> | undefined} */
let auth;

// Secrets and bindings arrive with the first request's env, so the isolate sets up then, once.
// import() checks the key's format and checksum, takes its mode from it and keeps only its digest and
// hint. The top-up carries a reference, so the account is credited once however many isolates seed it.
// The tables are created on first use here (migrate() is idempotent); a real deployment applies them
// once with `wrangler d1 migrations apply` (see the README), and seeds its keys from the CLI.
/** @param {Bindings} env @param {D1KeyStore} store @param {DurableObjectCreditLedger} ledger */
async function seed(env, store, ledger) {
  const secret = env.KEYGATE_DEMO_KEY;
  const credits = Number(env.KEYGATE_DEMO_CREDITS);
  await store.migrate();
  const imported = new KeyManager({ store })
    .import({ accountId: 'acct_demo', name: 'demo', permissions: ['email:verify'], secret })
    // Another isolate imported it first: the key is in D1 already.
    .catch((err) => {
      if (err?.code !== 'key_conflict') throw err;
    });
  await Promise.all([imported, ledger.topUp('acct_demo', credits, { reference: 'demo-seed' })]);
}

/**
 * @param {Bindings} env
 * @returns {import('hono').MiddlewareHandler<Env>}
 */
function authFor(env) {
  // Bindings are the same for the isolate's life: one client each, made on its first request.
  store ??= new D1KeyStore({ db: env.DB, cache: env.KEYS });
  const keys = store;
  ledger ??= new DurableObjectCreditLedger({ namespace: env.KEYGATE_CREDITS });
  const credits = ledger;
  // A failed seed (the credit object unreachable, say) is tried again by the next request.
  seeded ??= seed(env, keys, credits).catch((err) => {
    seeded = undefined;
    throw err;
  });
  // Env adds the bindings to keygate's ApiKeyEnv; Hono's Context types do not widen by themselves.
  auth ??= /** @type {import('hono').MiddlewareHandler<Env>} */ (
    /** @type {unknown} */ (
      apiKeyAuth({
        store: keys,
        permissions: ['email:verify'],
        // getConnInfo reads CF-Connecting-IP, which Cloudflare's edge sets: safe for allow lists.
        clientIp: (c) => getConnInfo(c).remote.address,
        rateLimit: {
          limiter: new DurableObjectRateLimiter({ namespace: env.KEYGATE_LIMITS }),
          default: { limit: Number(env.KEYGATE_RATE_LIMIT_PER_MINUTE), windowMs: 60_000 },
          // 503 when the limiter's object fails, rather than counting in this isolate alone.
          onLimiterError: 'deny',
        },
        // One credit a verification, held before the handler and settled once it has answered below 500.
        credits: { ledger: credits, cost: 1 },
      })
    )
  );
  return auth;
}

/** @type {Hono<Env>} */
const app = new Hono();
app.use('/v1/*', async (c, next) => {
  const handler = authFor(c.env);
  await seeded;
  return handler(c, next);
});
app.post('/v1/email/verify', async (c) => {
  const { email = '' } = await c.req.json().catch(() => ({}));
  const key = c.get('apiKey');
  return c.json({
    email,
    valid_syntax: /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email),
    mode: key.mode,
    account: key.accountId,
    credits_left: c.get('apiKeyCredits')?.balance,
  });
});

export default app;
