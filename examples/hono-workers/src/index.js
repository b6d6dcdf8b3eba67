// keygate on Cloudflare Workers with Hono. The demo key comes from a secret:
//   wrangler secret put KEYGATE_DEMO_KEY   (locally: KEYGATE_DEMO_KEY=mk_test_... in .dev.vars)
// A real deployment would back keygate with a shared store instead of this per-isolate memory.
import { Hono } from 'hono';
import { getConnInfo } from 'hono/cloudflare-workers';
import { KeyManager, MemoryKeyStore } from 'keygate';
import { apiKeyAuth } from 'keygate/hono';

/** @typedef {{ Bindings: { KEYGATE_DEMO_KEY: string } } & import('keygate/hono').ApiKeyEnv} Env */

const store = new MemoryKeyStore();
const keys = new KeyManager({ store });
/** @type {Promise<unknown> | undefined} */
let seeded;

// Secrets arrive with the first request's env, so the key is imported then, once per isolate. import()
// checks the key's format and checksum, takes its mode from it and keeps only its digest and hint.
/** @param {string} secret */
function seed(secret) {
  return keys.import({ accountId: 'acct_demo', name: 'demo', permissions: ['email:verify'], secret });
}

/** @type {Hono<Env>} */
const app = new Hono();
app.use('/v1/*', async (c, next) => {
  seeded ??= seed(c.env.KEYGATE_DEMO_KEY);
  await seeded;
  await next();
});
// getConnInfo reads CF-Connecting-IP, which Cloudflare's edge sets: safe for allow lists.
app.use('/v1/*', apiKeyAuth({ store, permissions: ['email:verify'], clientIp: (c) => getConnInfo(c).remote.address }));
app.post('/v1/email/verify', async (c) => {
  const { email = '' } = await c.req.json().catch(() => ({}));
  const key = c.get('apiKey');
  return c.json({
    email,
    valid_syntax: /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email),
    mode: key.mode,
    account: key.accountId,
  });
});

export default app;
