// The key page's "Usage": the "Usage by day" table lists days with traffic and collapses each run
// of quiet days into one row; the chart has whole-number ticks; no traffic at all says so instead
// of drawing an empty chart.
import { type UsageCount, utcDay } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';
import { BASE, Client, setup } from './support.js';

const DAY = 86_400_000;

async function keyWithUsage(perDay: Record<number, { allowed?: number; denied?: number }>, lastUsed = true) {
  const s = setup();
  const client = await new Client(s.ui).signIn();
  const { key } = await s.keys.create({ accountId: 'acct_1', name: 'k', mode: 'test' });
  const day = (n: number) => utcDay(s.clock() - n * DAY);
  const counts: UsageCount[] = Object.entries(perDay).flatMap(([n, { allowed = 0, denied = 0 }]) => {
    const at = { keyId: key.id, accountId: 'acct_1', day: day(Number(n)) };
    return [
      ...(allowed ? [{ ...at, outcome: 'allowed' as const, count: allowed }] : []),
      ...(denied ? [{ ...at, outcome: 'ip_not_allowed' as const, count: denied }] : []),
    ];
  });
  const lastUsedAt = new Date(s.clock() - 40 * DAY).toISOString();
  await s.store.addUsage({
    counts,
    activity: lastUsed ? [{ keyId: key.id, lastUsedAt, lastUsedIp: '203.0.113.7' }] : [],
  });
  const html = await (await client.get(`${BASE}/keys/${key.id}`)).text();
  const table = html.slice(
    html.indexOf('<caption>Usage by day</caption>'),
    html.indexOf('</table>', html.indexOf('<caption>Usage by day</caption>')),
  );
  const rows = [...table.matchAll(/<tr[^>]*><th scope="row">([^<]+)<\/th>(.*?)<\/tr>/g)].map(
    ([, date, cells]) =>
      `${date}: ${(cells ?? '')
        .replace(/<[^>]+>/g, ' ')
        .trim()
        .replace(/\s+/g, ' ')}`,
  );
  return { html, rows, day };
}

describe('"Usage by day"', () => {
  it('lists only days with traffic, newest first, and one row per run of days without', async () => {
    const { rows, day } = await keyWithUsage({ 0: { allowed: 4 }, 3: { allowed: 100, denied: 5 }, 4: { denied: 2 } });
    expect(rows).toEqual([
      `${day(0)}: 4 0`,
      `${day(2)} to ${day(1)}: No traffic`,
      `${day(3)}: 100 5`,
      `${day(4)}: 0 2`,
      `${day(29)} to ${day(5)}: No traffic`,
    ]);
  });

  it('a single quiet day is a row of its own date', async () => {
    const { rows, day } = await keyWithUsage(
      Object.fromEntries(Array.from({ length: 30 }, (_, i) => [i, { allowed: i === 7 ? 0 : 1 }])),
    );
    expect(rows).toHaveLength(30);
    expect(rows).toContain(`${day(7)}: No traffic`);
  });
});

describe('the usage chart', () => {
  it.each([
    [1, ['0', '1']],
    [2, ['0', '1', '2']],
    [3, ['0', '5']],
    [7, ['0', '5', '10']],
    [1234, ['0', '1,000', '2,000']],
  ])('with a busiest day of %i has the whole-number ticks %j', async (busiest, ticks) => {
    const { html } = await keyWithUsage({ 0: { allowed: busiest } });
    const svg = html.slice(
      html.indexOf('<svg class="chart"'),
      html.indexOf('</svg>', html.indexOf('<svg class="chart"')),
    );
    const labels = [...svg.matchAll(/<text class="axis" x="42"[^>]*>([^<]+)<\/text>/g)].map((m) => m[1]);
    expect(labels).toEqual(ticks);
  });

  it('is replaced by "No traffic yet." for a key never used, with no empty chart', async () => {
    const { html, rows, day } = await keyWithUsage({}, false);
    expect(html).toContain('<p class="no-traffic">No traffic yet.</p>');
    expect(html).not.toContain('<svg class="chart"');
    expect(rows).toEqual([`${day(29)} to ${day(0)}: No traffic`]);
  });

  it('says "No traffic in the last 30 days." for a key used before that', async () => {
    const { html } = await keyWithUsage({});
    expect(html).toContain('<p class="no-traffic">No traffic in the last 30 days.</p>');
    expect(html).not.toContain('<svg class="chart"');
  });

  it('keeps the chart, an svg role="img" stating the totals, when there is traffic', async () => {
    const { html } = await keyWithUsage({ 2: { allowed: 9, denied: 1 } });
    expect(html).toMatch(
      /<svg class="chart" role="img" aria-label="Requests per day over the last 30 days: 9 allowed, 1 denied"/,
    );
    expect(html).not.toContain('no-traffic');
  });
});
