import { type AuthenticateOptions, authenticate, InvalidInputError, KeyManager, MemoryKeyStore } from 'keygate';
import { createDenialResponder } from 'keygate/adapter-kit';
import { describe, expect, it } from 'vitest';

const store = new MemoryKeyStore();
const keys = new KeyManager({ store });
const a = await keys.create({ accountId: 'acct_1', name: 'a', mode: 'test' });
const b = await keys.create({ accountId: 'acct_1', name: 'b', mode: 'test' });

type Headers = Record<string, string | string[]>;
const auth = (headers: Headers | globalThis.Headers, options: AuthenticateOptions) =>
  authenticate({ headers }, store, options);

const outcome = async (headers: Headers, options: AuthenticateOptions) => {
  const r = await auth(headers, options);
  return r.ok ? r.key.id : r.code;
};

describe("authenticate's from option", () => {
  it.each<[string, Headers, string]>([
    ['Bearer <key>', { authorization: `Bearer ${a.secret}` }, a.key.id],
    ['the scheme in lower or mixed case', { Authorization: `bearer ${a.secret}` }, a.key.id],
    ['several spaces after the scheme', { authorization: `BEARER   ${a.secret}` }, a.key.id],
    ['optional white space around the value', { authorization: `\tBearer ${a.secret}  ` }, a.key.id],
    ['no Authorization field', {}, 'missing_api_key'],
    ['an empty Authorization field', { authorization: '' }, 'missing_api_key'],
    ['the key only in x-api-key', { 'x-api-key': a.secret }, 'missing_api_key'],
    ['the scheme alone', { authorization: 'Bearer' }, 'malformed_api_key'],
    ['the scheme and a space', { authorization: 'Bearer ' }, 'malformed_api_key'],
    ['another scheme', { authorization: `Basic ${a.secret}` }, 'malformed_api_key'],
    ['a scheme that only starts like Bearer', { authorization: `Bearerx ${a.secret}` }, 'malformed_api_key'],
    ['the key without a scheme', { authorization: a.secret }, 'malformed_api_key'],
    ['two tokens', { authorization: `Bearer ${a.secret} ${b.secret}` }, 'malformed_api_key'],
    ['two challenges', { authorization: `Bearer ${a.secret}, Bearer ${b.secret}` }, 'malformed_api_key'],
    ['a tab instead of a space', { authorization: `Bearer\t${a.secret}` }, 'malformed_api_key'],
    ['two Authorization fields', { authorization: [`Bearer ${a.secret}`, `Bearer ${a.secret}`] }, 'malformed_api_key'],
    ['a token that is not a key', { authorization: 'Bearer hunter2' }, 'malformed_api_key'],
  ])("'bearer' with %s", async (_, headers, expected) => {
    expect(await outcome(headers, { from: 'bearer' })).toBe(expected);
  });

  it.each<[string, Headers, string]>([
    ['the key in x-api-key', { 'x-api-key': a.secret }, a.key.id],
    ['the key in Authorization: Bearer', { authorization: `Bearer ${a.secret}` }, a.key.id],
    ['the same key in both', { 'x-api-key': a.secret, authorization: `bearer ${a.secret}` }, a.key.id],
    ['two different keys', { 'x-api-key': a.secret, authorization: `Bearer ${b.secret}` }, 'malformed_api_key'],
    ['the key beside another scheme', { 'x-api-key': a.secret, authorization: 'Basic dTpw' }, a.key.id],
    ['another scheme alone', { authorization: 'Basic dTpw' }, 'malformed_api_key'],
    [
      'the key beside a Bearer field with no token',
      { 'x-api-key': a.secret, authorization: 'Bearer' },
      'malformed_api_key',
    ],
    [
      'the key beside two Authorization fields',
      { 'x-api-key': a.secret, authorization: ['x', 'y'] },
      'malformed_api_key',
    ],
    [
      'garbage in x-api-key beside a Bearer key',
      { 'x-api-key': 'hunter2', authorization: `Bearer ${a.secret}` },
      'malformed_api_key',
    ],
    ['nothing', {}, 'missing_api_key'],
  ])("'either' with %s", async (_, headers, expected) => {
    expect(await outcome(headers, { from: 'either' })).toBe(expected);
  });

  it("'header' (the default) never reads Authorization", async () => {
    expect(await outcome({ authorization: `Bearer ${a.secret}` }, {})).toBe('missing_api_key');
    expect(await outcome({ authorization: `Bearer ${b.secret}`, 'x-api-key': a.secret }, { from: 'header' })).toBe(
      a.key.id,
    );
  });

  it('reads a Fetch Headers object the same way', async () => {
    const headers = new Headers({ Authorization: `Bearer ${a.secret}` });
    expect(await auth(headers, { from: 'bearer' })).toMatchObject({ ok: true, key: { id: a.key.id } });
    headers.set('x-api-key', b.secret);
    expect(await auth(headers, { from: 'either' })).toMatchObject({ status: 401, code: 'malformed_api_key' });
  });

  it.each([['cookie'], [''], [null], [1]])('refuses from: %j with InvalidInputError naming from', async (from) => {
    const error = await auth({}, { from: from as never }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ field: 'from' });
  });
});

describe('the 401 challenge for each from', () => {
  it.each([
    [undefined, 'ApiKey header="x-api-key"'],
    ['header', 'ApiKey header="x-api-key"'],
    ['bearer', 'Bearer'],
    ['either', 'ApiKey header="x-api-key", Bearer'],
  ] as const)('from %s: WWW-Authenticate: %s', (from, challenge) => {
    const respond = createDenialResponder(from === undefined ? {} : { from });
    expect(respond({ code: 'missing_api_key' }).headers['www-authenticate']).toBe(challenge);
    expect(respond({ code: 'key_suspended' }).headers['www-authenticate']).toBeUndefined();
  });

  it('names a custom key header in the ApiKey challenge', () => {
    const respond = createDenialResponder({ header: 'X-Key', from: 'either' });
    expect(respond({ code: 'invalid_api_key' }).headers['www-authenticate']).toBe('ApiKey header="x-key", Bearer');
  });
});
