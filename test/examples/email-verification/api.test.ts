import { generateKey } from 'keygate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, PGLITE, type Service, startService } from './service.js';

const PROBLEM = /^application\/problem\+json/;
const long254 = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
const long255 = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`;
/** A valid domain name of `octets` octets (192 to 255), in four labels. */
const domainOf = (octets: number) =>
  `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(octets - 192)}`;
const findBody = (domain: string) => JSON.stringify({ domain, firstName: 'Ada', lastName: 'Lovelace' });

describe.each(BACKENDS)('e-mail verification service on %s', PGLITE, (backend) => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService(backend);
  });
  afterAll(() => svc.close());

  describe('live keys do the real checks and pay for them', () => {
    it.each([
      ['ada@example.com', 'deliverable', 'mail_server_found', 'found'],
      ['Ada@Bücher.example', 'deliverable', 'mail_server_found', 'found'],
      ['ada@a-only.example', 'deliverable', 'mail_server_found', 'implicit'],
      ['someone@mailinator.com', 'risky', 'disposable', 'found'],
      ['info@example.com', 'risky', 'role_account', 'found'],
      ['Support+eu@example.com', 'risky', 'role_account', 'found'],
      ['ada@nothing.example', 'undeliverable', 'no_mail_server', 'none'],
      ['ada@nxdomain.example', 'undeliverable', 'no_mail_server', 'none'],
      ['ada@nullmx.example', 'undeliverable', 'domain_refuses_mail', 'null'],
      ['ada@servfail.example', 'unknown', 'dns_unavailable', 'unknown'],
      ['ada@slow.example', 'unknown', 'dns_unavailable', 'unknown'],
      ['not-an-address', 'undeliverable', 'invalid_syntax', null],
    ])('%s is %s (%s)', async (email, result, reason, mx) => {
      const before = await svc.balance();
      const res = await svc.post('/v1/email/verify', svc.secrets.live, { email });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ email, result, reason, checks: { mx }, mode: 'live' });
      expect(res.json.billing).toMatchObject({ charged: 1, balance: before - 1 });
      expect(await svc.balance()).toBe(before - 1);
    });

    it('converts an internationalised domain to punycode and lists MX hosts by priority', async () => {
      const idn = await svc.post('/v1/email/verify', svc.secrets.live, { email: 'Ada@Bücher.example' });
      expect(idn.json.normalized).toBe('Ada@xn--bcher-kva.example');
      const plain = await svc.post('/v1/email/verify', svc.secrets.live, { email: 'ada@example.com' });
      expect(plain.json.checks.mxHosts).toEqual(['mx1.example.com', 'mx2.example.com']);
    });

    it('verifies a batch in order and charges one credit per address', async () => {
      const before = await svc.balance();
      const emails = ['ada@example.com', 'info@example.com', 'bad@', 'ada@nothing.example'];
      const res = await svc.post('/v1/email/verify/batch', svc.secrets.live, { emails });
      expect(res.status).toBe(200);
      expect(res.json.count).toBe(4);
      expect(res.json.results.map((r: { email: string; result: string }) => [r.email, r.result])).toEqual([
        ['ada@example.com', 'deliverable'],
        ['info@example.com', 'risky'],
        ['bad@', 'undeliverable'],
        ['ada@nothing.example', 'undeliverable'],
      ]);
      expect(res.json.billing).toMatchObject({ charged: 4, balance: before - 4 });
      expect(await svc.balance()).toBe(before - 4);
    });

    it.each([
      ['ada@example.com', 100, []],
      ['info@example.com', 70, ['role_account']],
      ['user12345@example.com', 90, ['generated_looking']],
      ['ada@a-only.example', 90, ['implicit_mx']],
      ['ada@mailinator.com', 40, ['disposable']],
      ['ada@servfail.example', 60, ['dns_unavailable']],
      ['ada@nothing.example', 0, ['no_mail_server']],
      ['a..b@example.com', 0, ['invalid_syntax']],
    ])('scores %s at %i', async (email, score, factors) => {
      const before = await svc.balance();
      const res = await svc.post('/v1/email/score', svc.secrets.live, { email });
      expect(res.status).toBe(200);
      expect(res.json.score).toBe(score);
      expect(res.json.factors.map((f: { factor: string }) => f.factor)).toEqual(factors);
      expect(await svc.balance()).toBe(before - 1);
    });

    it('finds contact candidates, most common pattern first, for 5 credits', async () => {
      const before = await svc.balance();
      const res = await svc.post('/v1/contacts/find', svc.secrets.live, {
        domain: 'example.com',
        firstName: 'José',
        lastName: "Núñez-O'Neil",
      });
      expect(res.status).toBe(200);
      expect(res.json.mx).toEqual({ status: 'found', hosts: ['mx1.example.com', 'mx2.example.com'] });
      const emails = res.json.candidates.map((c: { email: string }) => c.email);
      expect(emails.slice(0, 5)).toEqual([
        'jose.nunezoneil@example.com',
        'jnunezoneil@example.com',
        'jose@example.com',
        'josenunezoneil@example.com',
        'j.nunezoneil@example.com',
      ]);
      expect(new Set(emails).size).toBe(emails.length);
      expect(res.json.candidates.every((c: { result: string }) => c.result === 'deliverable')).toBe(true);
      expect(res.json.billing).toMatchObject({ charged: 5, balance: before - 5 });
    });

    it('finds no deliverable candidate at a domain without mail servers (and still charges the search)', async () => {
      const before = await svc.balance();
      const res = await svc.post('/v1/contacts/find', svc.secrets.live, {
        domain: 'nothing.example',
        firstName: 'Ada',
        lastName: 'Lovelace',
      });
      expect(res.json.mx.status).toBe('none');
      expect(new Set(res.json.candidates.map((c: { result: string }) => c.result))).toEqual(new Set(['undeliverable']));
      expect(await svc.balance()).toBe(before - 5);
    });

    it('shows the balance and the calling key, never its digest', async () => {
      const res = await svc.call('GET', '/v1/account', svc.secrets.live);
      expect(res.status).toBe(200);
      expect(res.json.account.balance).toBe(await svc.balance());
      expect(res.json.account.entries[0]).toMatchObject({ kind: 'charge', amount: expect.any(Number) });
      expect(res.json.key).toMatchObject({ name: 'live', mode: 'live', hint: expect.stringMatching(/^mk_live_…/) });
      expect(res.json.key).not.toHaveProperty('hash');
      expect(JSON.stringify(res.json)).not.toContain(svc.secrets.live);
      expect(res.json.prices).toEqual({ verify: 1, score: 1, find: 5 });
    });
  });

  describe('address syntax (RFC 5321/5322 limits), as a test key sees it', () => {
    it.each([
      ['first.last@example.com', true],
      ["o'brien+tag@example.co.uk", true],
      ['"john doe"@example.com', true],
      ['"a\\"b"@example.com', true],
      [`${'a'.repeat(64)}@example.com`, true],
      ['user@bücher.example', true],
      [long254, true],
      [long255, false],
      [`${'a'.repeat(65)}@example.com`, false],
      ['a..b@example.com', false],
      ['.a@example.com', false],
      ['a.@example.com', false],
      ['a b@example.com', false],
      ['"unclosed@example.com', false],
      ['@example.com', false],
      ['a@', false],
      ['a@example', false],
      ['a@-example.com', false],
      ['a@exa_mple.com', false],
      [`a@${'b'.repeat(64)}.com`, false],
      ['a@example.123', false],
      ['a@[192.0.2.1]', false],
      ['no-at-sign', false],
    ])('%s valid: %s', async (email, valid) => {
      const res = await svc.post('/v1/email/verify', svc.secrets.test, { email });
      expect(res.status).toBe(200);
      expect(res.json.checks.syntax).toBe(valid ? 'valid' : 'invalid');
      if (!valid) expect(res.json).toMatchObject({ result: 'undeliverable', reason: 'invalid_syntax' });
    });
  });

  describe('test keys get the sandbox: deterministic, no DNS, no charge', () => {
    it.each([
      ['deliverable@example.com', 'deliverable', 'mail_server_found'],
      ['undeliverable@example.com', 'undeliverable', 'no_mail_server'],
      ['risky@example.com', 'risky', 'role_account'],
      ['disposable@example.com', 'risky', 'disposable'],
      ['unknown@example.com', 'unknown', 'dns_unavailable'],
      ['Deliverable+tag@any-domain.example', 'deliverable', 'mail_server_found'],
      ['ada@nothing.example', 'deliverable', 'mail_server_found'],
      ['info@example.com', 'risky', 'role_account'],
      ['someone@mailinator.com', 'risky', 'disposable'],
      ['not-an-address', 'undeliverable', 'invalid_syntax'],
      ['constructor@example.com', 'deliverable', 'mail_server_found'],
    ])('%s is %s', async (email, result, reason) => {
      const asked = svc.dns.asked.length;
      const before = await svc.balance();
      for (let i = 0; i < 2; i++) {
        const res = await svc.post('/v1/email/verify', svc.secrets.test, { email });
        expect(res.status).toBe(200);
        expect(res.json).toMatchObject({ result, reason, mode: 'test', billing: { charged: 0 } });
      }
      expect(svc.dns.asked.length).toBe(asked);
      expect(await svc.balance()).toBe(before);
    });

    it('searches a domain with room only for the shortest candidates, marking the longer ones invalid_syntax', async () => {
      const res = await svc.call('POST', '/v1/contacts/find', svc.secrets.test, undefined, findBody(domainOf(251)));
      expect(res.status).toBe(200);
      expect(res.json.domain).toBe(domainOf(251));
      const reasons = Object.fromEntries(
        res.json.candidates.map((c: { pattern: string; reason: string }) => [c.pattern, c.reason]),
      );
      expect(reasons).toMatchObject({ fl: 'mail_server_found', 'first.last': 'invalid_syntax' });
    });

    it('answers batch, score, contacts and account without DNS or charges', async () => {
      const asked = svc.dns.asked.length;
      const before = await svc.balance();
      const batch = await svc.post('/v1/email/verify/batch', svc.secrets.test, {
        emails: ['deliverable@example.com', 'undeliverable@example.com'],
      });
      expect(batch.json.results.map((r: { result: string }) => r.result)).toEqual(['deliverable', 'undeliverable']);
      const score = await svc.post('/v1/email/score', svc.secrets.test, { email: 'disposable@example.com' });
      expect(score.json).toMatchObject({ score: 40, mode: 'test' });
      const find = await svc.post('/v1/contacts/find', svc.secrets.test, {
        domain: 'nothing.example',
        firstName: 'Ada',
        lastName: 'Lovelace',
      });
      expect(find.json.candidates[0]).toMatchObject({ email: 'ada.lovelace@nothing.example', result: 'deliverable' });
      const account = await svc.call('GET', '/v1/account', svc.secrets.test);
      expect(account.json).toMatchObject({ mode: 'test', account: { balance: before } });
      for (const res of [batch, score, find]) expect(res.json.billing).toEqual({ charged: 0 });
      expect(svc.dns.asked.length).toBe(asked);
      expect(await svc.balance()).toBe(before);
    });
  });

  describe('refusals cost nothing', () => {
    const unknownKey = generateKey({ mode: 'live' });
    it.each([
      ['no key', undefined, '/v1/email/verify', 401, 'missing_api_key'],
      ['a malformed key', 'mk_live_nope', '/v1/email/verify', 401, 'malformed_api_key'],
      ['an unknown key', unknownKey, '/v1/email/verify', 401, 'invalid_api_key'],
      ['a revoked key', 'revoked', '/v1/email/verify', 401, 'revoked_api_key'],
      ['a key from outside its allow list', 'elsewhere', '/v1/email/verify', 403, 'ip_not_allowed'],
      ['verify without email:verify', 'scoreOnly', '/v1/email/verify', 403, 'insufficient_permissions'],
      ['batch without email:verify', 'findOnly', '/v1/email/verify/batch', 403, 'insufficient_permissions'],
      ['score without email:score', 'verifyOnly', '/v1/email/score', 403, 'insufficient_permissions'],
      ['contacts without contacts:find', 'verifyOnly', '/v1/contacts/find', 403, 'insufficient_permissions'],
      ['account without a key', undefined, '/v1/account', 401, 'missing_api_key'],
    ] as const)('%s gets %i %s', async (_, which, path, status, code) => {
      const key = which && which in svc.secrets ? svc.secrets[which as keyof Service['secrets']] : which;
      const before = await svc.balance();
      const body = {
        email: 'ada@example.com',
        emails: ['ada@example.com'],
        domain: 'example.com',
        firstName: 'A',
        lastName: 'B',
      };
      const res = path === '/v1/account' ? await svc.call('GET', path, key) : await svc.post(path, key, body);
      expect(res.status).toBe(status);
      expect(res.type).toMatch(PROBLEM);
      expect(res.json).toMatchObject({ status, code });
      expect(await svc.balance()).toBe(before);
    });

    const tooLarge = JSON.stringify({ email: `${'a'.repeat(110_000)}@example.com` });
    it.each([
      ['malformed JSON', '/v1/email/verify', '{"email": "ada@example.com"', 'body'],
      ['a body that is not an object', '/v1/email/verify', '["ada@example.com"]', 'body'],
      ['a JSON null body', '/v1/email/verify', 'null', 'body'],
      ['a missing email', '/v1/email/verify', '{}', 'email'],
      ['an email that is a number', '/v1/email/verify', '{"email": 42}', 'email'],
      ['an empty email', '/v1/email/verify', '{"email": "  "}', 'email'],
      ['an email of the wrong type for score', '/v1/email/score', '{"email": ["a@example.com"]}', 'email'],
      ['a missing emails list', '/v1/email/verify/batch', '{"email": "a@example.com"}', 'emails'],
      ['emails that is not a list', '/v1/email/verify/batch', '{"emails": "a@example.com"}', 'emails'],
      ['an empty batch', '/v1/email/verify/batch', '{"emails": []}', 'emails'],
      [
        'a batch of 101',
        '/v1/email/verify/batch',
        JSON.stringify({ emails: Array(101).fill('a@example.com') }),
        'emails',
      ],
      [
        'a batch item that is not a string',
        '/v1/email/verify/batch',
        '{"emails": ["a@example.com", null]}',
        'emails[1]',
      ],
      ['a missing domain', '/v1/contacts/find', '{"firstName": "Ada", "lastName": "Lovelace"}', 'domain'],
      [
        'an unusable domain',
        '/v1/contacts/find',
        '{"domain": "no_tld", "firstName": "Ada", "lastName": "L"}',
        'domain',
      ],
      [
        'a firstName of the wrong type',
        '/v1/contacts/find',
        '{"domain": "example.com", "firstName": 1, "lastName": "L"}',
        'firstName',
      ],
      [
        'a lastName with no usable letter',
        '/v1/contacts/find',
        '{"domain": "example.com", "firstName": "Ada", "lastName": "!!"}',
        'lastName',
      ],
      ['a body over 100 kB', '/v1/email/verify', tooLarge, 'body'],
      ['a 253-octet domain (no room for x@)', '/v1/contacts/find', findBody(domainOf(253)), 'domain'],
      ['a 252-octet domain (no room for al@)', '/v1/contacts/find', findBody(domainOf(252)), 'domain'],
    ])('%s gets 400 on %s', async (_, path, raw, field) => {
      const before = await svc.balance();
      const res = await svc.call('POST', path, svc.secrets.live, undefined, raw);
      expect(res.status).toBe(400);
      expect(res.type).toMatch(PROBLEM);
      expect(res.json).toEqual({
        type: 'urn:email-verification:problem:invalid_request',
        title: 'Invalid request',
        status: 400,
        detail: expect.any(String),
        code: 'invalid_request',
        field,
      });
      expect(await svc.balance()).toBe(before);
    });

    it('refuses a body that is not sent as JSON', async () => {
      const res = await fetch(`${svc.url}/v1/email/verify`, {
        method: 'POST',
        headers: { 'x-api-key': svc.secrets.live, 'content-type': 'text/plain' },
        body: 'ada@example.com',
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_request', field: 'body' });
    });

    it.each([
      ['GET', '/v1/nowhere', 'live'],
      ['GET', '/v1/nowhere', undefined],
      ['POST', '/v1/email', 'live'],
    ] as const)('%s %s gets 404 problem+json', async (method, path, which) => {
      const res = await svc.call(method, path, which ? svc.secrets[which] : undefined);
      expect(res.status).toBe(404);
      expect(res.type).toMatch(PROBLEM);
      expect(res.json).toMatchObject({ status: 404, code: 'not_found' });
    });

    it.each([
      ['GET', '/v1/email/verify', 'live', 'POST'],
      ['GET', '/v1/email/verify', undefined, 'POST'],
      ['PUT', '/v1/email/verify/batch', 'live', 'POST'],
      ['DELETE', '/v1/email/score', 'test', 'POST'],
      ['GET', '/v1/contacts/find', 'live', 'POST'],
      ['GET', '/V1/Email/Verify/', 'live', 'POST'],
      ['DELETE', '/v1/account', 'live', 'GET, HEAD'],
      ['POST', '/v1/account', 'live', 'GET, HEAD'],
      ['POST', '/healthz', undefined, 'GET, HEAD'],
    ] as const)(
      '%s %s (a route for other methods) gets 405 problem+json with Allow: %s',
      async (method, path, which, allow) => {
        const before = await svc.balance();
        const res = await svc.call(method, path, which ? svc.secrets[which] : undefined);
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe(allow);
        expect(res.type).toMatch(PROBLEM);
        expect(res.json).toMatchObject({ status: 405, code: 'method_not_allowed', title: 'Method not allowed' });
        expect(res.json.detail).toContain(allow);
        expect(await svc.balance()).toBe(before);
      },
    );

    it('OPTIONS on a route answers 204 with its methods in Allow', async () => {
      const res = await svc.call('OPTIONS', '/v1/email/verify');
      expect(res.status).toBe(204);
      expect(res.headers.get('allow')).toBe('POST');
    });
  });
});
