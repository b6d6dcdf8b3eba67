// keygate on Cloudflare Workers with Hono. The demo key comes from a secret:
//   wrangler secret put KEYGATE_DEMO_KEY   (locally: KEYGATE_DEMO_KEY=mk_test_... in .dev.vars)
// A real deployment would back keygate with a shared store instead of this per-isolate memory.
import { Hono } from 'hono';
import { getConnInfo } from 'hono/cloudflare-workers';
import { hashKey, keyHint, MemoryKeyStore, parseKey } from 'keygate';
import { apiKeyAuth } from 'keygate/hono';

const store = new MemoryKeyStore();
let seeded;

// Secrets arrive with the first request's env, so the store is seeded then, once per isolate.
async function seed(secret) {
  const parsed = parseKey(secret);
  if (!parsed) throw new Error('KEYGATE_DEMO_KEY is not a keygate key');
  const now = new Date().toISOString();
  await store.insert({
    id: 'key_demo',
    hash: await hashKey(secret),
    accountId: 'acct_demo',
    name: 'demo',
    mode: parsed.mode,
    status: 'active',
    permissions: ['email:verify'],
    allowedIps: [],
    hint: keyHint(secret),
    createdAt: now,
    updatedAt: now,
    expiresAt: null,
    revokedAt: null,
    rotatedFrom: null,
    rotatedTo: null,
    metadata: {},
    version: 1,
  });
}

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
