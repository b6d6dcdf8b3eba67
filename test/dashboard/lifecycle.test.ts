// Suspending, resuming and rotating with a timed grace from a key's page: forms, what the pages
// show, and what the refused requests leave unchanged.
import { authenticate } from 'keygate';
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

const HOUR = 3_600_000;

async function withKey() {
  const s = setup();
  const client = await new Client(s.ui).signIn();
  const created = await s.keys.create({ accountId: 'acct_1', name: 'billing', mode: 'live' });
  const page = async () => (await client.get(`${BASE}/keys/${created.key.id}`)).text();
  const auth = () => authenticate({ headers: { 'x-api-key': created.secret } }, s.store, { clock: s.clock });
  return { ...s, client, ...created, page, auth };
}

const rowOf = (html: string, name: string) =>
  new RegExp(`<th scope="row"><a href="[^"]+">${name}</a></th>([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '';

describe('suspending and resuming a key from its page', () => {
  it('offers "Suspend key" with a "Reason" field on an active key', async () => {
    const s = await withKey();
    const html = await s.page();
    expect(html).toContain(`<form method="post" action="${BASE}/keys/${s.key.id}/suspend" class="form">`);
    expect(html).toMatch(/<label for="suspend-reason">Reason<\/label>\s*<input id="suspend-reason" name="reason"/);
    expect(html).toContain('>Suspend key</button>');
    expect(html).not.toContain('>Resume key</button>');
  });

  it('suspends with the reason: the page shows suspended, the reason and "Resume key", and the key is refused', async () => {
    const s = await withKey();
    const response = await s.client.post(`${BASE}/keys/${s.key.id}/suspend`, { reason: 'invoice <b>unpaid</b>' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`${BASE}/keys/${s.key.id}?done=suspended`);
    expect(await s.keys.get(s.key.id)).toMatchObject({ status: 'suspended', suspendedReason: 'invoice <b>unpaid</b>' });
    expect(await s.auth()).toMatchObject({ status: 403, code: 'key_suspended' });

    const html = await s.page();
    expect(html).toContain('<span class="badge badge-warn">suspended</span>');
    expect(html).toContain('<dt>Reason</dt><dd>invoice &lt;b&gt;unpaid&lt;/b&gt;</dd>');
    expect(html).toContain('>Resume key</button>');
    expect(html).not.toContain('>Suspend key</button>');
    expect(html).toContain('>Rotate key</button>');
    expect(html).toContain('>Revoke key</a>');
    expect(rowOf(await (await s.client.get(`${BASE}/`)).text(), 'billing')).toContain('<td>suspended</td>');
    expect(s.events.map((e) => e.type)).toEqual(['key.created', 'key.suspended']);
  });

  it('suspends without a reason when the field is left empty', async () => {
    const s = await withKey();
    expect((await s.client.post(`${BASE}/keys/${s.key.id}/suspend`, { reason: '  ' })).status).toBe(303);
    expect(await s.keys.get(s.key.id)).toMatchObject({ status: 'suspended', suspendedReason: null });
    expect(await s.page()).toContain('<dt>Reason</dt><dd>none given</dd>');
  });

  it('resumes: the key is active again and authenticates', async () => {
    const s = await withKey();
    await s.keys.suspend(s.key.id, { reason: 'review' });
    const response = await s.client.post(`${BASE}/keys/${s.key.id}/resume`, {});
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`${BASE}/keys/${s.key.id}?done=resumed`);
    expect(await s.keys.get(s.key.id)).toMatchObject({ status: 'active', suspendedReason: null });
    expect(await s.auth()).toMatchObject({ ok: true });
    expect(await s.page()).toContain('>Suspend key</button>');
  });

  it('a refused reason comes back with 422, the text kept and the field named; nothing is suspended', async () => {
    const s = await withKey();
    const response = await s.client.post(`${BASE}/keys/${s.key.id}/suspend`, { reason: 'x'.repeat(501) });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toMatch(
      /<input id="suspend-reason" name="reason" maxlength="500" autocomplete="off" value="x{501}" aria-invalid="true"/,
    );
    expect(html).toContain('reason is longer than 500 characters');
    expect(await s.keys.get(s.key.id)).toMatchObject({ status: 'active', version: 1 });
  });

  it('lists suspended keys under the status filter "suspended"', async () => {
    const s = await withKey();
    await s.keys.create({ accountId: 'acct_1', name: 'other', mode: 'test' });
    await s.keys.suspend(s.key.id);
    const html = await (await s.client.get(`${BASE}/?status=suspended`)).text();
    expect([...html.matchAll(/<th scope="row"><a href="[^"]+">([^<]+)<\/a>/g)].map((m) => m[1])).toEqual(['billing']);
    expect(html).toContain('<option value="suspended" selected>suspended</option>');
  });

  it('refuses a resume without the CSRF token with 403, and the key stays suspended', async () => {
    const s = await withKey();
    await s.keys.suspend(s.key.id);
    const response = await s.client.post(`${BASE}/keys/${s.key.id}/resume`, { _csrf: '' });
    expect(response.status).toBe(403);
    expect((await s.keys.get(s.key.id))?.status).toBe('suspended');
  });

  it("answers 404 for another account's key, even with a valid CSRF token, and changes nothing", async () => {
    const s = await withKey();
    const theirs = await s.keys.create({ accountId: 'acct_2', name: 'theirs', mode: 'test' });
    expect((await s.client.post(`${BASE}/keys/${theirs.key.id}/suspend`, { reason: 'x' })).status).toBe(404);
    await s.keys.suspend(theirs.key.id);
    expect((await s.client.post(`${BASE}/keys/${theirs.key.id}/resume`, {})).status).toBe(404);
    expect((await s.keys.get(theirs.key.id))?.status).toBe('suspended');
  });

  it('a revoked key offers neither, and both are refused with 409', async () => {
    const s = await withKey();
    await s.keys.suspend(s.key.id);
    await s.keys.revoke(s.key.id);
    const html = await s.page();
    expect(html).not.toContain('>Resume key</button>');
    expect(html).not.toContain('>Suspend key</button>');
    expect((await s.client.post(`${BASE}/keys/${s.key.id}/resume`, {})).status).toBe(409);
    expect((await s.client.post(`${BASE}/keys/${s.key.id}/suspend`, {})).status).toBe(409);
    expect((await s.keys.get(s.key.id))?.status).toBe('revoked');
  });
});

describe('rotating with a grace from the key page', () => {
  it('offers "Old key stays valid for" with five choices, "until I confirm from traffic" by default', async () => {
    const s = await withKey();
    const html = await s.page();
    expect(html).toContain('<label for="rotate-grace">Old key stays valid for</label>');
    const options = [...html.matchAll(/<option value="([^"]+)"( selected)?>([^<]+)<\/option>/g)]
      .filter((m) => ['none', '1h', '24h', '7d', 'confirm'].includes(m[1] as string))
      .map((m) => `${m[3]}${m[2] ? ' (selected)' : ''}`);
    expect(options).toEqual([
      'none (ends at once)',
      '1 hour',
      '24 hours',
      '7 days',
      'until I confirm from traffic (selected)',
    ]);
  });

  it('"1 hour": the old key works for an hour, then is refused as expired; the page says when it ends', async () => {
    const s = await withKey();
    const response = await s.client.post(`${BASE}/keys/${s.key.id}/rotate`, { grace: '1h' });
    expect(response.status).toBe(201);
    const ends = new Date(s.clock() + HOUR).toISOString();
    expect(await s.keys.get(s.key.id)).toMatchObject({ expiresAt: ends });
    expect(await response.text()).toContain('works until');
    s.clock.advance(HOUR - 1);
    expect(await s.auth()).toMatchObject({ ok: true });
    s.clock.advance(1);
    expect(await s.auth()).toMatchObject({ status: 401, code: 'expired_api_key' });
  });

  it('"none (ends at once)": the old key is refused at once', async () => {
    const s = await withKey();
    expect((await s.client.post(`${BASE}/keys/${s.key.id}/rotate`, { grace: 'none' })).status).toBe(201);
    expect(await s.auth()).toMatchObject({ code: 'expired_api_key' });
  });

  it('"until I confirm from traffic" leaves the old key without an expiry, as before', async () => {
    const s = await withKey();
    expect((await s.client.post(`${BASE}/keys/${s.key.id}/rotate`, { grace: 'confirm' })).status).toBe(201);
    expect(await s.keys.get(s.key.id)).toMatchObject({ expiresAt: null });
    expect(await s.auth()).toMatchObject({ ok: true });
  });

  it('a suspended key rotates from its page: the new key works, the old one stays suspended', async () => {
    const s = await withKey();
    await s.keys.suspend(s.key.id, { reason: 'leaked' });
    expect(await s.page()).toContain('>Rotate key</button>');
    const response = await s.client.post(`${BASE}/keys/${s.key.id}/rotate`, { grace: 'confirm' });
    expect(response.status).toBe(201);
    const secret =
      /id="new-api-key" class="secret" readonly value="(mk_live_[A-Za-z0-9]+)"/.exec(await response.text())?.[1] ?? '';
    const old = await s.keys.get(s.key.id);
    expect(old).toMatchObject({ status: 'suspended', suspendedReason: 'leaked' });
    expect(await s.keys.get(old?.rotatedTo ?? '')).toMatchObject({ status: 'active', rotatedFrom: s.key.id });
    expect(await s.auth()).toMatchObject({ status: 403, code: 'key_suspended' });
    const fresh = await authenticate({ headers: { 'x-api-key': secret } }, s.store, { clock: s.clock });
    expect(fresh).toMatchObject({ ok: true, key: { id: old?.rotatedTo } });
  });

  it('an unknown choice is 422 and rotates nothing', async () => {
    const s = await withKey();
    expect((await s.client.post(`${BASE}/keys/${s.key.id}/rotate`, { grace: '1y' })).status).toBe(422);
    expect(await s.keys.get(s.key.id)).toMatchObject({ rotatedTo: null, expiresAt: null });
    expect(await s.keys.list('acct_1')).toHaveLength(1);
  });
});
