// The secret scanning endpoint against a MemoryKeyStore: what GitHub's signed reports do to keys,
// what they are answered, and that nothing unsigned, malformed or unknown reaches the store.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AuditEntry,
  type AuditLog,
  authenticate,
  CachedKeyStore,
  capabilityOf,
  generateKey,
  type InvalidInputError,
  type KeygateEvent,
  KeyManager,
  type ManagedKey,
  MemoryKeyStore,
  type WritableKeyStore,
} from 'keygate';
import { type GithubSecretScanningOptions, githubSecretScanning, type LeakRotation } from 'keygate/leaks';
import { afterAll, describe, expect, it } from 'vitest';
import {
  derInteger,
  derSequence,
  derSignature,
  fakeGithub,
  KEYS_URL,
  lowS,
  P256_ORDER,
  reportOf,
  signatureParts,
} from './support.js';

const github = fakeGithub();
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A MemoryKeyStore that counts its `findByHash` calls. */
function countingStore(): WritableKeyStore & { lookups: number } {
  const inner = new MemoryKeyStore();
  const store = Object.create(inner) as WritableKeyStore & { lookups: number };
  store.lookups = 0;
  store.findByHash = (hash: string) => {
    store.lookups++;
    return inner.findByHash(hash);
  };
  return store;
}

async function setup(options: Partial<GithubSecretScanningOptions> = {}) {
  const store = countingStore();
  const events: KeygateEvent[] = [];
  const keys = new KeyManager({ store, onEvent: (e) => void events.push(e) });
  const live = await keys.create({ accountId: 'acct_1', name: 'prod', mode: 'live' });
  const test = await keys.create({ accountId: 'acct_1', name: 'sandbox', mode: 'test' });
  const handler = githubSecretScanning({
    manager: keys,
    publicKeysUrl: KEYS_URL,
    fetch: github.fetch,
    onEvent: (e) => void events.push(e),
    ...options,
  });
  const send = async (reports: unknown, init?: Parameters<typeof github.request>[1]) => {
    const response = await handler(github.request(reports, init));
    return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
  };
  return { store, keys, live, test, events, handler, send };
}

const leaked = (events: KeygateEvent[]) => events.filter((e) => e.type === 'key.leaked');
const audit = (keys: KeyManager, keyId: string) => keys.audit({ accountId: 'acct_1', keyId });

describe('a signed report of a live key', () => {
  it("suspends it, as GitHub's scanner, and the next request through a warm cache gets 403 key_suspended", async () => {
    const store = new CachedKeyStore(new MemoryKeyStore());
    const keys = new KeyManager({ store });
    const { secret, key } = await keys.create({ accountId: 'acct_1', name: 'prod', mode: 'live' });
    const request = { headers: { 'x-api-key': secret } };
    expect((await authenticate(request, store)).ok).toBe(true);
    const handler = githubSecretScanning({ manager: keys, publicKeysUrl: KEYS_URL, fetch: github.fetch });
    const response = await handler(github.request([reportOf(secret)]));
    expect(response.status).toBe(200);
    expect(await authenticate(request, store)).toMatchObject({ ok: false, code: 'key_suspended', status: 403 });
    expect(await keys.get(key.id)).toMatchObject({
      status: 'suspended',
      suspendedReason: 'leaked: found by GitHub secret scanning at https://github.com/octocat/hello/blob/abc/config.js',
    });
  });

  it("finds the key through the manager's pepper", async () => {
    const store = new MemoryKeyStore();
    const keys = new KeyManager({ store, pepper: 'a-server-side-pepper' });
    const { secret, key } = await keys.create({ accountId: 'acct_1', name: 'prod', mode: 'live' });
    const handler = githubSecretScanning({ manager: keys, publicKeysUrl: KEYS_URL, fetch: github.fetch });
    const response = await handler(github.request([reportOf(secret)]));
    expect((await response.json())[0].label).toBe('true_positive');
    expect((await keys.get(key.id))?.status).toBe('suspended');
  });

  it("answers GitHub's feedback format: the token's SHA-256, its type and true_positive", async () => {
    const { live, send } = await setup();
    const answer = await send([reportOf(live.secret)]);
    expect(answer).toEqual({
      status: 200,
      type: 'application/json',
      body: [{ token_hash: sha256(live.secret), token_type: 'keygate_api_key', label: 'true_positive' }],
    });
    expect(JSON.stringify(answer.body)).not.toContain(live.secret);
  });

  it("echoes the token as token_raw only when asked to with feedback: 'token_raw'", async () => {
    const { live, send } = await setup({ feedback: 'token_raw' });
    expect((await send([reportOf(live.secret)])).body).toEqual([
      { token_raw: live.secret, token_type: 'keygate_api_key', label: 'true_positive' },
    ]);
  });

  it('writes the suspension and the leak to the audit log as github-secret-scanning, with no secret', async () => {
    const { live, keys, send } = await setup();
    await send([reportOf(live.secret)]);
    const entries = await audit(keys, live.key.id);
    const actions = entries.map((e: AuditEntry) => [e.action, e.actor]);
    const actor = { type: 'api', id: 'github-secret-scanning' };
    expect(actions.slice(0, 2)).toEqual([
      ['key.leaked', actor],
      ['key.suspended', actor],
    ]);
    expect(entries[0]?.changes).toEqual({
      leak: {
        before: null,
        after: { url: 'https://github.com/octocat/hello/blob/abc/config.js', source: 'content', action: 'suspend' },
      },
    });
    const text = JSON.stringify(entries);
    expect(text).not.toContain(live.secret);
    expect(text).not.toContain(sha256(live.secret));
  });

  it('emits key.leaked with url, source and action, and no secret', async () => {
    const { live, events, send } = await setup();
    await send([reportOf(live.secret)]);
    expect(leaked(events)).toEqual([
      expect.objectContaining({
        type: 'key.leaked',
        keyId: live.key.id,
        accountId: 'acct_1',
        hint: live.key.hint,
        url: 'https://github.com/octocat/hello/blob/abc/config.js',
        source: 'content',
        action: 'suspend',
      }),
    ]);
    expect(JSON.stringify(events)).not.toContain(live.secret);
    expect(JSON.stringify(events)).not.toContain(sha256(live.secret));
  });

  it('cuts the token out of a URL that holds it, in the event, the audit entry and the reason', async () => {
    const { live, keys, events, send } = await setup();
    await send([reportOf(live.secret, `https://gist.github.com/x?k=${live.secret}`)]);
    const text = JSON.stringify([events, await audit(keys, live.key.id), await keys.get(live.key.id)]);
    expect(text).not.toContain(live.secret);
  });

  it('suspends once when two bodies report it at the same time', async () => {
    const { live, keys, handler } = await setup();
    const responses = await Promise.all([1, 2].map(() => handler(github.request([reportOf(live.secret)]))));
    expect(responses.map((r) => r.status)).toEqual([200, 200]);
    const suspensions = (await audit(keys, live.key.id)).filter((e) => e.action === 'key.suspended');
    expect(suspensions).toHaveLength(1);
  });

  it('acts and records once when reported twice, in two bodies or twice in one', async () => {
    const { live, keys, events, send } = await setup();
    const first = await send([reportOf(live.secret), reportOf(live.secret, 'https://github.com/x/y/blob/z/.env')]);
    const again = await send([reportOf(live.secret)]);
    expect(first.body.map((a: { label: string }) => a.label)).toEqual(['true_positive', 'true_positive']);
    expect(again.body[0].label).toBe('true_positive');
    const actions = (await audit(keys, live.key.id)).map((e) => e.action);
    expect(actions).toEqual(['key.leaked', 'key.suspended', 'key.created']);
    expect(events.filter((e) => e.type === 'key.suspended')).toHaveLength(1);
    expect(leaked(events).map((e) => e.action)).toEqual(['suspend']);
  });
});

describe('policies', () => {
  it('notifies only for a test key by default: the key keeps working', async () => {
    const { test, keys, events, send } = await setup();
    expect((await send([reportOf(test.secret)])).body[0].label).toBe('true_positive');
    expect(await keys.get(test.key.id)).toMatchObject({ status: 'active' });
    expect(leaked(events)).toEqual([expect.objectContaining({ keyId: test.key.id, action: 'notify' })]);
    expect((await audit(keys, test.key.id)).map((e) => e.action)).toEqual(['key.leaked', 'key.created']);
  });

  it("'notify' leaves a live key active", async () => {
    const { live, keys, send } = await setup({ policy: 'notify' });
    await send([reportOf(live.secret)]);
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'active' });
  });

  it("'revoke' revokes the key, once", async () => {
    const { live, keys, events, send } = await setup({ policy: 'revoke' });
    await send([reportOf(live.secret)]);
    await send([reportOf(live.secret)]);
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'revoked' });
    expect((await audit(keys, live.key.id)).filter((e) => e.action === 'key.revoked')).toEqual([
      expect.objectContaining({ actor: { type: 'api', id: 'github-secret-scanning' } }),
    ]);
    // The second report, within the replay window, records nothing either.
    expect(leaked(events).map((e) => e.action)).toEqual(['revoke']);
  });

  it("'rotate' ends the leaked key at once, hands the successor to onRotated, and rotates once", async () => {
    const rotations: LeakRotation[] = [];
    const { live, keys, send } = await setup({ policy: 'rotate', onRotated: (r) => void rotations.push(r) });
    await send([reportOf(live.secret)]);
    await send([reportOf(live.secret)]);
    expect(rotations).toHaveLength(1);
    const successor = rotations[0]?.successor;
    expect(await keys.get(live.key.id)).toMatchObject({ rotatedTo: successor?.key.id });
    expect(await authenticate({ headers: { 'x-api-key': live.secret } }, keys.store)).toMatchObject({
      code: 'expired_api_key',
    });
    expect(await authenticate({ headers: { 'x-api-key': successor?.secret as string } }, keys.store)).toMatchObject({
      ok: true,
    });
    const rotated = (await audit(keys, live.key.id)).filter((e) => e.action === 'key.rotated');
    expect(rotated).toEqual([expect.objectContaining({ actor: { type: 'api', id: 'github-secret-scanning' } })]);
  });

  it("'rotate' with rotateGraceMs leaves the leaked key working for the grace", async () => {
    const { live, keys, send } = await setup({ policy: 'rotate', rotateGraceMs: 3_600_000 });
    await send([reportOf(live.secret)]);
    await send([reportOf(live.secret)]);
    const view = await keys.get(live.key.id);
    expect(view).toMatchObject({ status: 'active' });
    expect(Date.parse(view?.expiresAt as string)).toBeGreaterThan(Date.now() + 3_500_000);
  });

  it('a function decides per key, here per account', async () => {
    const seen: ManagedKey[] = [];
    const { live, keys, send } = await setup({
      policy: (key) => {
        seen.push(key);
        return key.accountId === 'acct_vip' ? 'notify' : 'revoke';
      },
    });
    const vip = await keys.create({ accountId: 'acct_vip', name: 'prod', mode: 'live' });
    await send([reportOf(live.secret), reportOf(vip.secret)]);
    expect(seen.map((k) => k.id)).toEqual([live.key.id, vip.key.id]);
    expect((await keys.get(live.key.id))?.status).toBe('revoked');
    expect((await keys.get(vip.key.id))?.status).toBe('active');
  });

  it('refuses a policy that is not one of notify, suspend, rotate, revoke', async () => {
    const { keys } = await setup();
    expect(() => githubSecretScanning({ manager: keys, policy: 'delete' as never })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'policy' }),
    );
  });
});

describe('tokens that are not our keys', () => {
  it('are false positives; a malformed one (bad checksum, prefix, mode or length) is never looked up', async () => {
    const { store, send } = await setup();
    const good = generateKey({ mode: 'live' });
    const badChecksum = good.slice(0, -1) + (good.endsWith('A') ? 'B' : 'A');
    const tokens = [badChecksum, `xx${good.slice(2)}`, good.replace('_live_', '_prod_'), good.slice(0, -2), 'hello'];
    const answer = await send(tokens.map((t) => reportOf(t)));
    expect(answer.status).toBe(200);
    expect(answer.body.map((a: { label: string }) => a.label)).toEqual(tokens.map(() => 'false_positive'));
    expect(store.lookups).toBe(0);
  });

  it('a well-formed key that no key has is looked up once and is a false positive', async () => {
    const { store, send } = await setup();
    const answer = await send([reportOf(generateKey({ mode: 'live' }))]);
    expect(answer.body[0].label).toBe('false_positive');
    expect(store.lookups).toBe(1);
  });
});

describe('requests not signed by GitHub', () => {
  it.each<[string, (body: string) => Record<string, string>]>([
    ['no signature', () => ({ 'github-public-key-signature': '' })],
    ['no key id', () => ({ 'github-public-key-identifier': '' })],
    ['a signature that is not base64 DER', () => ({ 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' })],
    ['a signature of another body', () => github.headers('[]')],
    ['a signature by a key GitHub retired', () => ({ 'github-public-key-identifier': 'retired' })],
  ])('are refused 401 with %s, and change and look up nothing', async (_, tamper) => {
    const { live, keys, store, events, send } = await setup();
    const body = JSON.stringify([reportOf(live.secret)]);
    const answer = await send(undefined, { body, headers: tamper(body) });
    expect(answer.status).toBe(401);
    expect(answer.type).toBe('application/problem+json');
    expect(answer.body).toMatchObject({ status: 401, code: 'invalid_signature' });
    expect(store.lookups).toBe(0);
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'active' });
    expect(leaked(events)).toEqual([]);
  });

  it('a body changed after signing is refused 401', async () => {
    const { live, store, handler } = await setup();
    const signed = JSON.stringify([reportOf(live.secret)]);
    const request = new Request('http://service.test/', {
      method: 'POST',
      headers: github.headers(signed),
      body: signed.replace('content', 'commit!'),
    });
    expect((await handler(request)).status).toBe(401);
    expect(store.lookups).toBe(0);
  });
});

describe("GitHub's public keys", () => {
  it('are fetched once, and again for an unknown key id, at most once per refetchIntervalMs', async () => {
    const gh = fakeGithub('current');
    let now = 1_000_000;
    const { keys } = await setup();
    const handler = githubSecretScanning({
      manager: keys,
      publicKeysUrl: KEYS_URL,
      fetch: gh.fetch,
      clock: () => now,
      refetchIntervalMs: 60_000,
    });
    expect((await handler(gh.request([]))).status).toBe(200);
    expect((await handler(gh.request([]))).status).toBe(200);
    expect(gh.fetch.calls).toBe(1);
    now += 60_000;
    expect((await handler(gh.request([], { keyId: 'unheard-of' }))).status).toBe(401);
    expect(gh.fetch.calls).toBe(2);
    // Another unknown id within the interval: refused without asking GitHub again.
    expect((await handler(gh.request([], { keyId: 'also-unheard-of' }))).status).toBe(401);
    expect(gh.fetch.calls).toBe(2);
  });

  it('are fetched once for concurrent first requests, which all wait for that fetch', async () => {
    const gh = fakeGithub();
    const { keys } = await setup();
    const handler = githubSecretScanning({ manager: keys, publicKeysUrl: KEYS_URL, fetch: gh.fetch });
    const responses = await Promise.all([1, 2, 3].map(() => handler(gh.request([]))));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(gh.fetch.calls).toBe(1);
  });

  it('a key GitHub started signing with is picked up by the refetch', async () => {
    const before = fakeGithub('old');
    const after = fakeGithub('new');
    let served = before.publicKeysJson;
    let calls = 0;
    const { keys } = await setup();
    const handler = githubSecretScanning({
      manager: keys,
      publicKeysUrl: KEYS_URL,
      fetch: async () => {
        calls++;
        return new Response(served);
      },
      refetchIntervalMs: 0,
    });
    expect((await handler(before.request([]))).status).toBe(200);
    served = after.publicKeysJson;
    expect((await handler(after.request([]))).status).toBe(200);
    expect(calls).toBe(2);
  });

  it('unreachable before any was fetched: 503, nothing looked up', async () => {
    const { keys, store, live } = await setup();
    const handler = githubSecretScanning({
      manager: keys,
      publicKeysUrl: KEYS_URL,
      fetch: async () => new Response('down', { status: 502 }),
    });
    const response = await handler(github.request([reportOf(live.secret)]));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'public_keys_unavailable' });
    expect(store.lookups).toBe(0);
  });

  const servers: import('node:http').Server[] = [];
  afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

  it('are read over HTTP from publicKeysUrl with the global fetch', async () => {
    const gh = fakeGithub();
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(gh.publicKeysJson);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const { keys, live } = await setup();
    const handler = githubSecretScanning({
      manager: keys,
      publicKeysUrl: `http://127.0.0.1:${port}/keys.json`,
    });
    const response = await handler(gh.request([reportOf(live.secret)]));
    expect(response.status).toBe(200);
    expect(paths).toEqual(['/keys.json']);
  });

  it('must come from an https: URL, or http: on a loopback address', async () => {
    const { keys } = await setup();
    expect(() => githubSecretScanning({ manager: keys, publicKeysUrl: 'http://keys.example.com/' })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'publicKeysUrl' }),
    );
  });
});

describe('bodies', () => {
  it('over maxBodyBytes are refused 413 before anything else', async () => {
    const { store, send } = await setup({ maxBodyBytes: 100 });
    const answer = await send([reportOf(generateKey({ mode: 'live' })), reportOf(generateKey())]);
    expect(answer).toMatchObject({ status: 413, type: 'application/problem+json' });
    expect(store.lookups).toBe(0);
  });

  it.each([
    ['not JSON', '{"token":'],
    ['not an array', '{"token":"x"}'],
    ['an entry without a string token', '[{"token":1,"type":"t"}]'],
    ['an entry whose url is not a string', '[{"token":"x","url":5}]'],
  ])('that are %s are refused 400 with problem+json', async (_, body) => {
    const { send } = await setup();
    const answer = await send(undefined, { body });
    expect(answer).toMatchObject({ status: 400, type: 'application/problem+json', body: { code: 'invalid_payload' } });
  });

  it('an empty report is answered with an empty array', async () => {
    const { send } = await setup();
    expect(await send([])).toMatchObject({ status: 200, body: [] });
  });

  it('a GET is refused 405', async () => {
    const { handler } = await setup();
    const response = await handler(new Request('http://service.test/'));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('a report replayed', () => {
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;

  // One clock for the manager (which writes the times) and the handler (which measures the window).
  async function clocked(options: Partial<GithubSecretScanningOptions> = {}) {
    let now = Date.parse('2026-03-01T00:00:00.000Z');
    const clock = () => now;
    const events: KeygateEvent[] = [];
    const keys = new KeyManager({ store: new MemoryKeyStore(), clock, onEvent: (e) => void events.push(e) });
    const live = await keys.create({ accountId: 'acct_1', name: 'prod', mode: 'live' });
    const test = await keys.create({ accountId: 'acct_1', name: 'sandbox', mode: 'test' });
    const handler = githubSecretScanning({
      manager: keys,
      publicKeysUrl: KEYS_URL,
      fetch: github.fetch,
      clock,
      onEvent: (e) => void events.push(e),
      ...options,
    });
    const advance = (ms: number) => {
      now += ms;
    };
    const count = (type: KeygateEvent['type']) => events.filter((e) => e.type === type).length;
    return { keys, live, test, events, handler, advance, count };
  }

  it('the same signed request posted twice acts once: one suspension, one key.leaked event and audit entry', async () => {
    const { keys, live, handler, advance, count } = await clocked();
    const captured = github.request([reportOf(live.secret)]);
    const replay = captured.clone();
    const first = await handler(captured);
    advance(HOUR);
    const second = await handler(replay);
    expect([first.status, second.status]).toEqual([200, 200]);
    const answer = [{ token_hash: sha256(live.secret), token_type: 'keygate_api_key', label: 'true_positive' }];
    expect([await first.json(), await second.json()]).toEqual([answer, answer]);
    expect((await audit(keys, live.key.id)).map((e) => e.action)).toEqual([
      'key.leaked',
      'key.suspended',
      'key.created',
    ]);
    expect([count('key.leaked'), count('key.suspended')]).toEqual([1, 1]);
  });

  it('does not suspend again, within a day, a key its owner resumed; after the day a report acts again', async () => {
    const { keys, live, handler, advance, count } = await clocked();
    const captured = github.request([reportOf(live.secret)]);
    const replays = [captured.clone(), captured.clone()];
    await handler(captured);
    advance(HOUR);
    await keys.resume(live.key.id);
    advance(DAY - HOUR); // exactly a day after the report: still within the window
    expect((await handler(replays[0] as Request)).status).toBe(200);
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'active' });
    expect([count('key.leaked'), count('key.suspended')]).toEqual([1, 1]);
    advance(1);
    expect((await handler(replays[1] as Request)).status).toBe(200);
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'suspended' });
    expect([count('key.leaked'), count('key.suspended')]).toEqual([2, 2]);
  });

  it('a report that only notifies (a test key) is recorded once within the window, and again after it', async () => {
    const { keys, test, handler, advance, count } = await clocked();
    await handler(github.request([reportOf(test.secret)]));
    advance(DAY);
    await handler(github.request([reportOf(test.secret, 'https://github.com/octocat/other/blob/main/.env')]));
    expect(count('key.leaked')).toBe(1);
    advance(1);
    await handler(github.request([reportOf(test.secret)]));
    expect(count('key.leaked')).toBe(2);
    const leaks = (await audit(keys, test.key.id)).filter((e) => e.action === 'key.leaked');
    expect(leaks).toHaveLength(2);
  });

  it('a key suspended as leaked stays handled without its audit entry (the append failed)', async () => {
    const { keys, live, handler, advance, count } = await clocked();
    const log = capabilityOf(keys.store, 'audit') as AuditLog;
    log.append = async () => {
      throw new Error('the audit log is full');
    };
    await handler(github.request([reportOf(live.secret)]));
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'suspended' });
    advance(HOUR);
    expect((await handler(github.request([reportOf(live.secret)]))).status).toBe(200);
    expect([count('key.leaked'), count('key.suspended')]).toEqual([1, 1]);
  });

  it('an audit log that cannot be read does not keep a report from acting', async () => {
    const { keys, live, handler } = await clocked();
    const log = capabilityOf(keys.store, 'audit') as AuditLog;
    log.list = async () => {
      throw new Error('the audit log cannot be read');
    };
    expect((await handler(github.request([reportOf(live.secret)]))).status).toBe(200);
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'suspended' });
  });

  it('replayWindowMs sets the window, in milliseconds', async () => {
    const { keys, live, handler, advance, count } = await clocked({ replayWindowMs: 60_000 });
    await handler(github.request([reportOf(live.secret)]));
    await keys.resume(live.key.id);
    advance(60_001);
    await handler(github.request([reportOf(live.secret)]));
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'suspended' });
    expect(count('key.suspended')).toBe(2);
  });

  it.each([0, -1, Number.NaN, '1000'])('refuses replayWindowMs %o: a number > 0', async (replayWindowMs) => {
    const { keys } = await setup();
    expect(() => githubSecretScanning({ manager: keys, replayWindowMs: replayWindowMs as number })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'replayWindowMs' }),
    );
  });
});

describe("a genuine signature in an encoding other than DER's one", () => {
  const SIGNATURE = 'github-public-key-signature';

  // A report of the live key with GitHub's signature over it, its r and s, and a poster of any encoding.
  async function signed() {
    const context = await setup();
    const body = JSON.stringify([reportOf(context.live.secret)]);
    const headers = github.headers(body);
    const { r, s } = signatureParts(Buffer.from(headers[SIGNATURE] as string, 'base64'));
    const post = (der: Uint8Array) =>
      context.handler(
        new Request('http://service.test/github/secret-scanning', {
          method: 'POST',
          headers: { ...headers, [SIGNATURE]: Buffer.from(der).toString('base64') },
          body,
        }),
      );
    return { ...context, r, s: lowS(s), post };
  }

  it('the canonical one (low s) is accepted and acts', async () => {
    const { r, s, post, keys, live } = await signed();
    expect((await post(derSignature(r, s))).status).toBe(200);
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'suspended' });
  });

  it('its high-S twin (n - s, which GitHub does not promise never to send) is accepted and acts', async () => {
    const { r, s, post, keys, live } = await signed();
    const response = await post(derSignature(r, P256_ORDER - s));
    expect(response.status).toBe(200);
    expect((await response.json())[0].label).toBe('true_positive');
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'suspended' });
  });

  const pad = (integer: number[]) => [0x02, (integer[1] as number) + 1, 0x00, ...integer.slice(2)];
  it.each<[string, (r: bigint, s: bigint) => Uint8Array]>([
    [
      'a long-form sequence length',
      (r, s) => {
        const der = derSignature(r, s);
        return Uint8Array.from([0x30, 0x81, der.length - 2, ...der.subarray(2)]);
      },
    ],
    ['r padded with a zero byte', (r, s) => derSequence([...pad(derInteger(r)), ...derInteger(s)])],
    ['s padded with a zero byte', (r, s) => derSequence([...derInteger(r), ...pad(derInteger(s))])],
    ['a trailing byte', (r, s) => Uint8Array.from([...derSignature(r, s), 0x00])],
  ])('%s is refused 401, nothing looked up or changed', async (_, encode) => {
    const { r, s, post, keys, live, store, events } = await signed();
    const response = await post(encode(r, s));
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'invalid_signature' });
    expect(store.lookups).toBe(0);
    expect(await keys.get(live.key.id)).toMatchObject({ status: 'active' });
    expect(leaked(events)).toEqual([]);
  });
});

describe('options', () => {
  it.each([
    [{ replayWindow: 1_000 }, 'replayWindow', 'replayWindowMs'],
    [{ polcy: 'revoke' }, 'polcy', 'policy'],
    [{ publicKeyUrl: KEYS_URL }, 'publicKeyUrl', 'publicKeysUrl'],
    [{ rotateGrace: 0 }, 'rotateGrace', 'rotateGraceMs'],
  ])('%o is refused: field %s, did you mean %s', async (extra, field, near) => {
    const { keys } = await setup();
    const build = () => githubSecretScanning({ manager: keys, ...extra } as never);
    expect(build).toThrow(expect.objectContaining({ code: 'invalid_input', field }));
    expect(build).toThrow(`did you mean \`${near}\`?`);
    try {
      build();
    } catch (err) {
      expect((err as InvalidInputError).issues).toEqual([expect.objectContaining({ field, reason: 'unknown_option' })]);
    }
  });

  it('a name with nothing near lists the options', async () => {
    const { keys } = await setup();
    expect(() => githubSecretScanning({ manager: keys, store: keys.store } as never)).toThrow(
      /store is not an option of githubSecretScanning; the options are manager, policy/,
    );
  });

  it('every option documented is taken', async () => {
    const { keys } = await setup();
    const handler = githubSecretScanning({
      manager: keys,
      policy: 'notify',
      publicKeysUrl: KEYS_URL,
      fetch: github.fetch,
      clock: Date.now,
      onEvent: () => {},
      feedback: 'token_raw',
      rotateGraceMs: 0,
      onRotated: () => {},
      maxBodyBytes: 1_000,
      refetchIntervalMs: 1_000,
      keysTimeoutMs: 1_000,
      replayWindowMs: 1_000,
    });
    expect(typeof handler).toBe('function');
  });
});
