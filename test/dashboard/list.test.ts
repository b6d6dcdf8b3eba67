// The key list: the filter (text in the name, hint or id; status; mode) in one GET form, a rotation's
// two keys marked as a pair, and sparklines on one shared scale.
import { utcDay } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

const rowsOf = (html: string) =>
  [...html.matchAll(/<th scope="row"><a href="[^"]+">([^<]+)<\/a><\/th>/g)].map((m) => m[1]).sort();

/** Five keys: two rotated into a pair, one revoked, test and live. */
async function listed(options: Parameters<typeof setup>[0] = {}) {
  const s = setup(options);
  const client = await new Client(s.ui).signIn();
  const make = (name: string, mode: 'test' | 'live') => s.keys.create({ accountId: 'acct_1', name, mode });
  const ci = (await make('ci runner', 'test')).key;
  const web = (await make('web', 'live')).key;
  const old = (await make('laptop', 'test')).key;
  await s.keys.revoke(old.id);
  const api = (await make('api-gw', 'live')).key;
  const next = (await s.keys.rotate(api.id)).key;
  const list = async (query = '') => (await client.get(`${BASE}/${query}`)).text();
  return { ...s, client, list, ci, web, old, api, next };
}

describe.each([['a memory dashboard store', () => ({})]])('the filter, with %s', (_, options) => {
  it('matches text in the name, the hint or the id, case-insensitively', async () => {
    const s = await listed(options());
    expect(rowsOf(await s.list('?q=I%20RUN'))).toEqual(['ci runner']);
    expect(rowsOf(await s.list(`?q=${encodeURIComponent(s.web.hint.slice(-4).toUpperCase())}`))).toContain('web');
    expect(rowsOf(await s.list(`?q=${s.ci.id}`))).toEqual(['ci runner']);
  });

  it('filters by status and by mode, alone and together with text', async () => {
    const s = await listed(options());
    expect(rowsOf(await s.list('?status=revoked'))).toEqual(['laptop']);
    expect(rowsOf(await s.list('?status=active'))).toEqual(['api-gw', 'api-gw', 'ci runner', 'web']);
    expect(rowsOf(await s.list('?mode=live'))).toEqual(['api-gw', 'api-gw', 'web']);
    expect(rowsOf(await s.list('?mode=test&status=active'))).toEqual(['ci runner']);
    const html = await s.list('?q=I-G&mode=live&status=active');
    expect(rowsOf(html)).toEqual(['api-gw', 'api-gw']);
    expect(html).toContain('2 keys match “I-G”, status active, mode live.');
  });

  it('ignores a status or mode it does not know, and keeps the choice in the form', async () => {
    const s = await listed(options());
    expect(rowsOf(await s.list('?status=paused&mode=prod'))).toHaveLength(5);
    const html = await s.list('?status=revoked&mode=test');
    expect(html).toContain('<option value="revoked" selected>revoked</option>');
    expect(html).toContain('<option value="test" selected>test</option>');
    expect(html).toContain('<label for="q">Filter by name, hint or ID</label>');
    expect(html).toMatch(/<form method="get" action="\/dashboard\/" class="filter" role="search"/);
  });
});

it('keeps the filter in the pagination links', async () => {
  const s = setup();
  const client = await new Client(s.ui).signIn();
  for (let i = 0; i < 55; i++) await s.keys.create({ accountId: 'acct_1', name: `live-${i}`, mode: 'live' });
  await s.keys.create({ accountId: 'acct_1', name: 'test-only', mode: 'test' });
  const html = await (await client.get(`${BASE}/?q=live&mode=live&status=active`)).text();
  expect(html).toContain('Page 1 of 2');
  expect(html).toContain(`href="${BASE}/?q=live&amp;status=active&amp;mode=live&amp;page=2"`);
});

describe('a rotation in the list', () => {
  it('marks the pair: the new key "rotated from" the old, the old "replaced by" the new, each with name and hint', async () => {
    const s = await listed();
    const html = await s.list();
    const rowOf = (id: string) => {
      const start = html.indexOf(`<th scope="row"><a href="${BASE}/keys/${id}">`);
      return html.slice(start, html.indexOf('</tr>', start));
    };
    expect(rowOf(s.next.id)).toContain(
      `rotated from <a href="${BASE}/keys/${s.api.id}">“api-gw”</a> <code>${s.api.hint}</code>`,
    );
    expect(rowOf(s.api.id)).toContain(
      `replaced by <a href="${BASE}/keys/${s.next.id}">“api-gw”</a> <code>${s.next.hint}</code>`,
    );
    expect(rowOf(s.api.id)).toContain('>in progress</span>');
  });

  it('names the partner when it is not on the same page', async () => {
    const s = await listed();
    const html = await s.list(`?q=${s.next.id}`);
    expect(rowsOf(html)).toEqual(['api-gw']);
    expect(html).toContain(`rotated from <a href="${BASE}/keys/${s.api.id}">“api-gw”</a> <code>${s.api.hint}</code>`);
  });
});

describe('sparklines', () => {
  it('share one scale: 3 requests draw a bar 3/11 as tall as 11, and the scale is said in words', async () => {
    const s = setup();
    const client = await new Client(s.ui).signIn();
    const few = (await s.keys.create({ accountId: 'acct_1', name: 'few', mode: 'test' })).key;
    const many = (await s.keys.create({ accountId: 'acct_1', name: 'many', mode: 'test' })).key;
    const day = utcDay(s.clock());
    await s.store.addUsage({
      counts: [
        { keyId: few.id, accountId: 'acct_1', day, outcome: 'allowed', count: 3 },
        { keyId: many.id, accountId: 'acct_1', day, outcome: 'allowed', count: 11 },
      ],
      activity: [],
    });
    const html = await (await client.get(`${BASE}/`)).text();
    const heightOf = (label: string) => {
      const svg = html.slice(html.indexOf(`aria-label="${label}"`));
      return -Number(/<path d="M[\d.]+ 24v(-[\d.]+)/.exec(svg)?.[1]);
    };
    expect(heightOf('11 requests in the last 30 days')).toBe(22);
    expect(heightOf('3 requests in the last 30 days')).toBe(6);
    expect(html).toContain('The “Last 30 days” bars share one scale: a full bar is 11 requests in a day.');
  });
});
