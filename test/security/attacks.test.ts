// The attack catalogue (test/fixtures/attacks.ts) through every adapter on Node, over real sockets
// where the adapter has a server. Each denial must be the exact problem+json every adapter sends.
import { createDenialResponder } from 'keygate/adapter-kit';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ATTACKS,
  type Attack,
  INHERITED_ROUTE_ORDERS,
  MISSPELT_OPTIONS,
  WEBHOOK_TARGET_ATTACKS,
} from '../fixtures/attacks.js';
import { HEADERS } from '../frameworks/cases.js';
import { seedCaseStore } from '../frameworks/fixtures.js';
import { type RawRequest, startApps } from './support/apps.js';

const fixture = await seedCaseStore();
const trusted = await startApps({ store: fixture.store }, true);
const untrusted = await startApps({ store: fixture.store }, false);
afterAll(() => Promise.all([trusted.close(), untrusted.close()]));

const respond = createDenialResponder({ retryAfterMs: 7000 });

function requestOf(row: Attack): RawRequest {
  const headers: Array<[string, string]> = row.headers
    ? row.headers(fixture.secrets)
    : row.key
      ? [['x-api-key', fixture.secrets[row.key]]]
      : [];
  if (row.forwardedFor !== undefined) headers.push(['x-forwarded-for', row.forwardedFor]);
  return { path: row.query ? `/v1/check?${row.query(fixture.secrets)}` : '/v1/check', headers };
}

describe('the catalogue covers every bypass class the issue names', () => {
  it.each([
    'non-canonical IPv4',
    'IPv4 in IPv6',
    'IPv6 spelling',
    'zone id',
    'not an address',
    'forged forwarded header',
    'key header',
    'key value',
  ])('%s', (cls) => {
    expect(ATTACKS.filter((a) => a.class === cls).length).toBeGreaterThanOrEqual(4);
  });
});

describe('the catalogue covers inherited routes, misspelt options and internal webhook targets', () => {
  it('inherited routes: every controller first at least once', () => {
    expect(new Set(INHERITED_ROUTE_ORDERS.map((row) => row.order[0]))).toEqual(new Set(['open', 'guarded', 'strict']));
  });

  it('misspelt options: the request path, the adapters, key input, the cache, the ledger, webhooks, leaks', () => {
    expect(MISSPELT_OPTIONS.length).toBeGreaterThanOrEqual(10);
  });

  it.each(['loopback', 'loopback name', 'numeric host', 'private', 'private name', 'cloud metadata'])(
    'internal webhook targets: %s',
    (cls) => {
      expect(WEBHOOK_TARGET_ATTACKS.filter((a) => a.class === cls).length).toBeGreaterThanOrEqual(4);
    },
  );
});

describe.each(trusted.adapters.map(([name], i) => [name, i] as const))('%s', (_, i) => {
  it.each(ATTACKS)('$class: $name -> $expect', async (row) => {
    const apps = row.proxy === 'untrusted' ? untrusted : trusted;
    const send = (apps.adapters[i] as (typeof apps.adapters)[number])[1];
    const got = await send(requestOf(row));
    if (row.expect === 200) {
      expect({ status: got.status, body: got.body }).toEqual({
        status: 200,
        body: JSON.stringify({ keyId: fixture.ids[row.key ?? 'open'] }),
      });
      return;
    }
    const want = respond({ code: row.expect });
    expect(got).toEqual({
      status: want.status,
      headers: Object.fromEntries(HEADERS.map((h) => [h, want.headers[h] ?? null])),
      body: want.body,
    });
  });
});
