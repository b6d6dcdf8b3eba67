// The runtime matrix's case table: plain ESM that runs unchanged on Node, Bun, Deno and workerd.
// It seeds a MemoryKeyStore through KeyManager, sends every case through the core `authenticate`
// and through `withApiKeyAuth` from keygate/fetch, and returns what a client would observe. Nothing
// random or time-dependent is returned, so every runtime's answer must equal Node 20's byte for byte.
import { authenticate, generateKey, KeyManager, MemoryKeyStore } from 'keygate';
import { createDenialResponder } from 'keygate/adapter-kit';
import { withApiKeyAuth } from 'keygate/fetch';

const DAY = 86_400_000;
const HEADERS = ['content-type', 'www-authenticate', 'retry-after', 'cache-control'];
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };
const failingStore = { findByHash: () => Promise.reject(new Error('store down')) };

/** The case table: name, key (a seeded key's name or a literal header), client address, expected code. */
export const CASES = [
  { name: 'missing', expect: 'missing_api_key' },
  { name: 'malformed', header: 'mk_live_not-a-key', expect: 'malformed_api_key' },
  { name: 'invalid', key: 'unknown', expect: 'invalid_api_key' },
  { name: 'revoked', key: 'revoked', expect: 'revoked_api_key' },
  { name: 'expired', key: 'expired', expect: 'expired_api_key' },
  { name: 'store unavailable', key: 'open', store: 'failing', expect: 'key_store_unavailable' },
  { name: 'ip_not_allowed', key: 'allowListed', ip: '198.51.100.7', expect: 'ip_not_allowed' },
  { name: 'insufficient_permissions', key: 'readOnly', expect: 'insufficient_permissions' },
  { name: 'allowed', key: 'open', expect: 200 },
  { name: 'allowed: IPv4-mapped IPv6 in the allow list', key: 'allowListed', ip: '::ffff:203.0.113.7', expect: 200 },
  { name: 'allowed: IPv6 in the allow list', key: 'allowListed', ip: '2001:DB8::1', expect: 200 },
];

async function seed() {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const past = new KeyManager({ store, clock: () => Date.now() - 2 * DAY });
  const permissions = ['email:verify'];
  const created = {
    open: await keys.create({ accountId: 'acct_1', name: 'open', mode: 'test', permissions }),
    allowListed: await keys.create({
      accountId: 'acct_1',
      name: 'allow-listed',
      mode: 'live',
      permissions,
      allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
    }),
    readOnly: await keys.create({ accountId: 'acct_1', name: 'read-only', mode: 'live', permissions: ['email:read'] }),
    revoked: await keys.create({ accountId: 'acct_1', name: 'revoked', mode: 'live', permissions }),
    expired: await past.create({
      accountId: 'acct_1',
      name: 'expired',
      mode: 'live',
      permissions,
      expiresAt: new Date(Date.now() - DAY),
    }),
  };
  await keys.revoke(created.revoked.key.id);
  const secrets = { unknown: generateKey({ mode: 'live' }) };
  for (const [name, { secret }] of Object.entries(created)) secrets[name] = secret;
  return { store, secrets };
}

/** What a user notices of a key: never its id, hint or timestamps, which differ on every run. */
export const visible = (key) =>
  key && { name: key.name, mode: key.mode, permissions: key.permissions, status: key.status };

/**
 * What every adapter's handler answers for an allowed key. Not `Response.json`: its content-type differs
 * between runtimes (Bun adds a charset), and the matrix compares keygate's answers, not the host's helpers.
 */
export const answer = (key) => new Response(JSON.stringify(visible(key)), JSON_HEADERS);

const withFetch = (options) => withApiKeyAuth((_request, key) => answer(key), options);

/**
 * Runs every case; returns `{ runtime facts, results }` as plain JSON. `serve(options)` builds the
 * adapter under test for the case's options, as a Fetch-style `(request) => Promise<Response>` whose
 * handler answers `answer(key)`; keygate/fetch by default.
 */
export async function runCases(serve = withFetch) {
  const { store, secrets } = await seed();
  const respond = createDenialResponder();
  const results = [];
  for (const row of CASES) {
    const keyStore = row.store === 'failing' ? failingStore : store;
    const headers = {};
    if (row.key) headers['x-api-key'] = secrets[row.key];
    if (row.header) headers['x-api-key'] = row.header;
    const options = { permissions: ['email:verify'] };

    const core = await authenticate({ headers, ip: row.ip }, keyStore, options);
    const handler = await serve({ ...options, store: keyStore, clientIp: () => row.ip });
    const response = await handler(new Request('https://api.example/v1/email/verify', { headers }));
    const body = await response.text();
    const want = row.expect === 200 ? undefined : respond({ code: row.expect });
    results.push({
      name: row.name,
      expect: row.expect,
      core: { ok: core.ok, status: core.status, code: core.code, message: core.message, key: visible(core.key) },
      fetch: {
        status: response.status,
        headers: Object.fromEntries(HEADERS.map((h) => [h, response.headers.get(h)])),
        body,
        sameBytesAsResponder: want ? body === want.body && response.status === want.status : null,
      },
    });
  }
  return results;
}
