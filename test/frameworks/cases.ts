// The one table every adapter answers: each row of the check-order table, then the allow-list
// spellings, then rate limits. Each adapter test sends the rows through its own framework and must
// observe the same status, headers and body bytes, all of which come from `createDenialResponder`
// (denials) and `rateLimitHeaderFields` (the rate-limit fields on a 200).
import type { DenialCode, NamedRateLimit, RateLimitState } from 'keygate';
import { createDenialResponder, rateLimitHeaderFields } from 'keygate/adapter-kit';
import { expect, it } from 'vitest';
import { DEFAULT_LIMIT } from './apps.js';
import { type CaseFixture, LIMITED, SEVERAL_LIMITS, type SecretName } from './fixtures.js';

export type CasePath =
  | '/v1/check'
  | '/v1/down'
  | '/v1/slow'
  | '/v1/limited'
  | '/v1/batch'
  | '/v1/limiter-down'
  | '/v1/broke'
  | '/v1/bearer'
  | '/v1/either';

export interface AdapterCase {
  name: string;
  path: CasePath;
  /** A seeded key, sent in `x-api-key`. */
  key?: SecretName;
  /** A literal `x-api-key` value built from the secrets (for malformed keys). */
  header?: (secrets: CaseFixture['secrets']) => string;
  /** An `Authorization` value built from the secrets (the `/v1/bearer` and `/v1/either` routes read it). */
  authorization?: (secrets: CaseFixture['secrets']) => string;
  /** The key a 200 must echo, when it travels in `authorization` rather than as `key`. */
  echoes?: SecretName;
  /**
   * The client address, sent as `X-Forwarded-For` from a trusted proxy on 127.0.0.1 (Express and
   * Fastify trust loopback; the Fetch and Hono apps read it through `clientIp`). Undefined: no header,
   * so Express and Fastify see the socket's 127.0.0.1 and Fetch and Hono no address; both are outside
   * the allow list.
   */
  ip?: string;
  /** 200, or the denial code whose status the adapter must send. */
  expect: 200 | DenialCode;
  /** Where the key's rate limit stands after the request, which the response must state; absent: no rate-limit fields. */
  rateLimit?: RateLimitState;
}

// The rate-limited routes' limiter never moves its clock, so a window always has its full length to run.
const full = (limit: { limit: number; windowMs: number }): RateLimitState => ({
  ...limit,
  remaining: limit.limit,
  resetMs: limit.windowMs,
});

// Several limits, each full: the most restrictive (the fewest units left, then the longest reset) on top.
const fullSeveral = (limits: readonly NamedRateLimit[], counted = limits.length): RateLimitState => {
  const policies = limits.slice(0, counted).map((l) => ({ ...l, scope: 'key' as const, ...full(l) }));
  const top = policies.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  return {
    name: top.name,
    limit: top.limit,
    remaining: top.remaining,
    resetMs: top.resetMs,
    windowMs: top.windowMs,
    policies,
  };
};

const typo = (key: string) => key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');

const ALLOW = { path: '/v1/check', key: 'allowListed' } as const;

const bearer = (name: SecretName) => (s: CaseFixture['secrets']) => `Bearer ${s[name]}`;
const BEARER_OPEN = { authorization: bearer('open'), echoes: 'open' } as const;

// `from: 'bearer'` and `from: 'either'`: the key in `Authorization: Bearer`, in the key header, or both.
const BEARER_CASES: readonly AdapterCase[] = [
  { name: 'bearer: a key in Authorization: Bearer', path: '/v1/bearer', ...BEARER_OPEN, expect: 200 },
  {
    name: 'bearer: the scheme in any case',
    path: '/v1/bearer',
    authorization: (s) => `bEARER ${s.open}`,
    echoes: 'open',
    expect: 200,
  },
  { name: 'bearer: no Authorization', path: '/v1/bearer', expect: 'missing_api_key' },
  { name: 'bearer: a key only in x-api-key', path: '/v1/bearer', key: 'open', expect: 'missing_api_key' },
  {
    name: 'bearer: another scheme',
    path: '/v1/bearer',
    authorization: () => 'Basic dXNlcjpwYXNz',
    expect: 'malformed_api_key',
  },
  { name: 'bearer: no token', path: '/v1/bearer', authorization: () => 'Bearer', expect: 'malformed_api_key' },
  {
    name: 'bearer: two tokens',
    path: '/v1/bearer',
    authorization: (s) => `Bearer ${s.open} ${s.open}`,
    expect: 'malformed_api_key',
  },
  {
    name: 'bearer: a revoked key',
    path: '/v1/bearer',
    authorization: bearer('revoked'),
    expect: 'revoked_api_key',
  },
  {
    name: 'bearer: a suspended key',
    path: '/v1/bearer',
    authorization: bearer('suspended'),
    expect: 'key_suspended',
  },
  { name: 'either: a key in x-api-key', path: '/v1/either', key: 'open', expect: 200 },
  { name: 'either: a key in Authorization: Bearer', path: '/v1/either', ...BEARER_OPEN, expect: 200 },
  {
    name: 'either: the same key in both',
    path: '/v1/either',
    key: 'open',
    authorization: bearer('open'),
    expect: 200,
  },
  {
    name: 'either: two different keys',
    path: '/v1/either',
    key: 'open',
    authorization: bearer('readOnly'),
    expect: 'malformed_api_key',
  },
  {
    name: 'either: a key in x-api-key beside another scheme in Authorization',
    path: '/v1/either',
    key: 'open',
    authorization: () => 'Basic dXNlcjpwYXNz',
    expect: 200,
  },
  { name: 'either: no key anywhere', path: '/v1/either', expect: 'missing_api_key' },
  {
    name: 'either: a suspended key',
    path: '/v1/either',
    authorization: bearer('suspended'),
    expect: 'key_suspended',
  },
];

export const CASES: readonly AdapterCase[] = [
  { name: 'no key', path: '/v1/check', expect: 'missing_api_key' },
  { name: 'empty key header', path: '/v1/check', header: () => '', expect: 'missing_api_key' },
  { name: 'garbage key', path: '/v1/check', header: () => 'hunter2', expect: 'malformed_api_key' },
  { name: 'one typo (checksum)', path: '/v1/check', header: (s) => typo(s.open), expect: 'malformed_api_key' },
  {
    name: 'two keys in one header',
    path: '/v1/check',
    header: (s) => `${s.open}, ${s.open}`,
    expect: 'malformed_api_key',
  },
  {
    name: 'malformed is refused before the store',
    path: '/v1/down',
    header: () => 'mk_live_x',
    expect: 'malformed_api_key',
  },
  { name: 'store down', path: '/v1/down', key: 'open', expect: 'key_store_unavailable' },
  { name: 'store timeout', path: '/v1/slow', key: 'open', expect: 'key_store_unavailable' },
  { name: 'unknown key', path: '/v1/check', key: 'unknown', expect: 'invalid_api_key' },
  { name: 'revoked key', path: '/v1/check', key: 'revoked', expect: 'revoked_api_key' },
  { name: 'expired key', path: '/v1/check', key: 'expired', expect: 'expired_api_key' },
  { name: 'suspended key', path: '/v1/check', key: 'suspended', expect: 'key_suspended' },
  { name: 'address outside the allow list', ...ALLOW, ip: '198.51.100.7', expect: 'ip_not_allowed' },
  { name: 'permission not held', path: '/v1/check', key: 'readOnly', expect: 'insufficient_permissions' },
  { name: 'open key', path: '/v1/check', key: 'open', expect: 200 },
  { name: 'allow: IPv4 inside the list', ...ALLOW, ip: '203.0.113.7', expect: 200 },
  { name: 'allow: IPv4-mapped IPv6', ...ALLOW, ip: '::ffff:203.0.113.7', expect: 200 },
  { name: 'allow: IPv4-mapped IPv6 in hex', ...ALLOW, ip: '::FFFF:cb00:7107', expect: 200 },
  { name: 'allow: expanded IPv6', ...ALLOW, ip: '2001:0db8:0000:0000:0000:0000:0000:0001', expect: 200 },
  { name: 'allow: upper-case IPv6', ...ALLOW, ip: '2001:DB8::ABCD', expect: 200 },
  { name: 'deny: IPv6 outside the list', ...ALLOW, ip: '2001:db9::1', expect: 'ip_not_allowed' },
  { name: 'deny: octal IPv4', ...ALLOW, ip: '0313.0.113.7', expect: 'ip_not_allowed' },
  { name: 'deny: hex IPv4', ...ALLOW, ip: '0xcb.0.113.7', expect: 'ip_not_allowed' },
  { name: 'deny: short IPv4', ...ALLOW, ip: '203.113.7', expect: 'ip_not_allowed' },
  { name: 'deny: integer IPv4', ...ALLOW, ip: '3405803783', expect: 'ip_not_allowed' },
  { name: 'deny: zone id', ...ALLOW, ip: 'fe80::1%eth0', expect: 'ip_not_allowed' },
  { name: 'deny: zone id on a listed address', ...ALLOW, ip: '2001:db8::1%eth0', expect: 'ip_not_allowed' },
  { name: 'deny: "unknown"', ...ALLOW, ip: 'unknown', expect: 'ip_not_allowed' },
  { name: 'deny: host:port', ...ALLOW, ip: '203.0.113.7:8080', expect: 'ip_not_allowed' },
  { name: 'deny: [IPv6]:port', ...ALLOW, ip: '[2001:db8::1]:443', expect: 'ip_not_allowed' },
  { name: 'deny: empty address', ...ALLOW, ip: '', expect: 'ip_not_allowed' },
  { name: 'deny: no address', ...ALLOW, expect: 'ip_not_allowed' },
  ...BEARER_CASES,
  {
    name: 'limit: a route without rateLimit sends no rate-limit fields',
    path: '/v1/check',
    key: 'limited',
    expect: 200,
  },
  {
    name: "limit: the key's own limit on a 200",
    path: '/v1/limited',
    key: 'limited',
    expect: 200,
    rateLimit: full(LIMITED),
  },
  {
    name: 'limit: several named limits on a 200, each in the fields',
    path: '/v1/limited',
    key: 'severalLimits',
    expect: 200,
    rateLimit: fullSeveral(SEVERAL_LIMITS),
  },
  {
    name: 'limit: the first of several limits that refuses is 429, the later ones not counted',
    path: '/v1/batch',
    key: 'severalLimits',
    expect: 'rate_limited',
    rateLimit: fullSeveral(SEVERAL_LIMITS, 1),
  },
  {
    name: 'limit: the default for a key without one',
    path: '/v1/limited',
    key: 'open',
    expect: 200,
    rateLimit: full(DEFAULT_LIMIT),
  },
  {
    name: 'limit: a cost over what remains is 429 with Retry-After',
    path: '/v1/batch',
    key: 'limited',
    expect: 'rate_limited',
    rateLimit: full(LIMITED),
  },
  { name: 'limit: no own limit and no default is not limited', path: '/v1/batch', key: 'open', expect: 200 },
  {
    name: 'limit: a 403 before row 9 carries no fields',
    path: '/v1/limited',
    key: 'readOnly',
    expect: 'insufficient_permissions',
  },
  {
    name: 'limit: a 401 before row 9 carries no fields',
    path: '/v1/limited',
    key: 'unknown',
    expect: 'invalid_api_key',
  },
  {
    name: "limit: the shared limiter is down, onLimiterError 'deny'",
    path: '/v1/limiter-down',
    key: 'limited',
    expect: 'rate_limiter_unavailable',
  },
  {
    name: 'credits: a live key without credits is 402',
    path: '/v1/broke',
    key: 'limited',
    expect: 'insufficient_credits',
  },
  { name: 'credits: a test key is never billed', path: '/v1/broke', key: 'open', expect: 200 },
  {
    name: 'credits: a 403 before row 10 is not billed',
    path: '/v1/broke',
    key: 'readOnly',
    expect: 'insufficient_permissions',
  },
];

/** What a client sees of a response; headers absent from it are null. */
export interface Observed {
  status: number;
  headers: Record<(typeof HEADERS)[number], string | null>;
  body: string;
}

export const HEADERS = [
  'content-type',
  'www-authenticate',
  'retry-after',
  'cache-control',
  'ratelimit-policy',
  'ratelimit',
] as const;

/** A request as the table describes it. */
export interface CaseRequest {
  path: CasePath;
  headers: Record<string, string>;
}

/** Sends one request to an adapter under test. */
export type SendCase = (request: CaseRequest) => Promise<Observed>;

/** Reads what matters of a Fetch `Response`. */
export async function observe(response: Response): Promise<Observed> {
  const headers = Object.fromEntries(HEADERS.map((h) => [h, response.headers.get(h)])) as Observed['headers'];
  return { status: response.status, headers, body: await response.text() };
}

/** Sends a request over a real socket with the global `fetch`. */
export function sendOverHttp(base: string | Promise<string>): SendCase {
  return async ({ path, headers }) => observe(await fetch(`${await base}${path}`, { headers }));
}

/** The request a row describes. */
export function requestOf(row: AdapterCase, fixture: CaseFixture): CaseRequest {
  const headers: Record<string, string> = {};
  if (row.key) headers['x-api-key'] = fixture.secrets[row.key];
  if (row.header) headers['x-api-key'] = row.header(fixture.secrets);
  if (row.authorization) headers.authorization = row.authorization(fixture.secrets);
  if (row.ip !== undefined) headers['x-forwarded-for'] = row.ip;
  return { path: row.path, headers };
}

// The denials of each kind of route: the 401's challenges follow where the route reads the key.
const responders = {
  header: createDenialResponder({ retryAfterMs: 7000 }),
  bearer: createDenialResponder({ retryAfterMs: 7000, from: 'bearer' }),
  either: createDenialResponder({ retryAfterMs: 7000, from: 'either' }),
};
const respond = (path: CasePath) =>
  path === '/v1/bearer' ? responders.bearer : path === '/v1/either' ? responders.either : responders.header;

/**
 * Runs the whole table against one adapter: a denial must be exactly `createDenialResponder`'s
 * status, headers and body bytes; an allow reaches the route, which echoes the key id, with the
 * rate-limit fields of the key when the row says it is limited, and none otherwise.
 */
export function itAnswersEveryCase(fixture: () => CaseFixture, send: () => SendCase): void {
  it.each(CASES)('$name', async (row) => {
    const f = fixture();
    const got = await send()(requestOf(row, f));
    if (row.expect === 200) {
      const fields = row.rateLimit ? rateLimitHeaderFields(row.rateLimit) : undefined;
      expect({ status: got.status, policy: got.headers['ratelimit-policy'], state: got.headers.ratelimit }).toEqual({
        status: 200,
        policy: fields?.['ratelimit-policy'] ?? null,
        state: fields?.ratelimit ?? null,
      });
      expect(JSON.parse(got.body)).toEqual({ keyId: f.ids[(row.echoes ?? row.key) as SecretName] });
      return;
    }
    const want = respond(row.path)({ code: row.expect, rateLimit: row.rateLimit });
    expect(got).toEqual({
      status: want.status,
      headers: Object.fromEntries(HEADERS.map((h) => [h, want.headers[h] ?? null])),
      body: want.body,
    });
  });
}
