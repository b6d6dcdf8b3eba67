import { authenticate, KeyManager, UsageRecorder } from 'keygate';
import type { DashboardStore } from 'keygate/store-kit';
import { type Case, describeCases, poll, sleep } from './contract-kit.js';
import type { ContractTestApi, DashboardStoreFixture } from './contract-types.js';
import { type DashboardContext as Context, DASHBOARD_RECORD_CASES } from './dashboard-full-record.js';

/**
 * Options of {@link describeDashboardStoreContract}.
 *
 * @example
 * describeDashboardStoreContract('MyDashboardStore', factory, t, { patience: 30_000 });
 */
export interface DashboardStoreContractOptions {
  /** How long to wait for a token's expiry to show, in milliseconds. Default `10_000`. */
  patience?: number;
}

const ACCOUNT = 'acct_dashboard_contract';
const namesOf = (page: { records: ReadonlyArray<{ name: string }> }) => page.records.map((r) => r.name);

async function pagesNewestFirst({ fx, expect }: Context): Promise<void> {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const keys = new KeyManager({ store: fx.keys, clock: () => now });
  for (let i = 0; i < 12; i++) {
    await keys.create({ accountId: ACCOUNT, name: `${i % 3 ? 'Web' : 'batch'}-${i}`, mode: 'test' });
    now += 1000;
  }
  await keys.create({ accountId: 'acct_other', name: 'Web-x', mode: 'test' });
  const page = (offset: number, limit: number) => fx.store.listKeysPage(ACCOUNT, { offset, limit });
  const first = await page(0, 5);
  expect(first.total).toBe(12);
  expect(namesOf(first)).toEqual(['Web-11', 'Web-10', 'batch-9', 'Web-8', 'Web-7']);
  expect(namesOf(await page(5, 5))).toEqual(['batch-6', 'Web-5', 'Web-4', 'batch-3', 'Web-2']);
  expect(await page(100, 5)).toEqual({ records: [], total: 12 });
  expect(await fx.store.listKeysPage('acct_nobody', { offset: 0, limit: 5 })).toEqual({ records: [], total: 0 });
  // Keys created in the same millisecond: the greater id first.
  const twins = [await keys.create({ accountId: 'acct_twins', name: 'a', mode: 'test' })];
  twins.push(await keys.create({ accountId: 'acct_twins', name: 'b', mode: 'test' }));
  const listed = await fx.store.listKeysPage('acct_twins', { offset: 0, limit: 5 });
  expect(listed.records.map((r) => r.id)).toEqual([...twins.map((t) => t.key.id)].sort().reverse());
  expect(listed.records[0]).toMatchObject({ accountId: 'acct_twins', mode: 'test', status: 'active', version: 1 });
}

async function filters({ fx, expect }: Context): Promise<void> {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const keys = new KeyManager({ store: fx.keys, clock: () => now });
  const create = async (name: string, mode: 'live' | 'test') => {
    now += 1000;
    return (await keys.create({ accountId: ACCOUNT, name, mode })).key;
  };
  await create('Billing API', 'live');
  await create('billing-worker', 'test');
  const ci = await create('ci', 'test');
  await create('Deploy', 'live');
  await keys.revoke(ci.id);
  const page = (query: Omit<Parameters<DashboardStore['listKeysPage']>[1], 'offset' | 'limit'>) =>
    fx.store.listKeysPage(ACCOUNT, { offset: 0, limit: 10, ...query });
  expect(await page({ search: 'BILL' }).then(namesOf)).toEqual(['billing-worker', 'Billing API']);
  expect(await page({ search: ci.hint.slice(-5).toUpperCase() }).then(namesOf)).toEqual(['ci']);
  expect(await page({ search: ci.id.toUpperCase() }).then(namesOf)).toEqual(['ci']);
  expect(await page({ search: '%' })).toEqual({ records: [], total: 0 });
  expect(await page({ status: 'revoked' }).then(namesOf)).toEqual(['ci']);
  expect(await page({ status: 'active' })).toMatchObject({ total: 3 });
  expect(await page({ mode: 'live' }).then(namesOf)).toEqual(['Deploy', 'Billing API']);
  expect(await page({ mode: 'test', search: 'bill' }).then(namesOf)).toEqual(['billing-worker']);
  expect(await page({ status: 'active', mode: 'test' }).then(namesOf)).toEqual(['billing-worker']);
  const second = await fx.store.listKeysPage(ACCOUNT, { offset: 1, limit: 1, mode: 'live' });
  expect([namesOf(second), second.total]).toEqual([['Billing API'], 2]);
}

async function addsUpDays({ fx, expect }: Context): Promise<void> {
  const [day1, day2] = ['2026-03-01', '2026-03-02'];
  await fx.keys.addUsage({
    counts: [
      { keyId: 'k1', accountId: ACCOUNT, day: day2, outcome: 'allowed', count: 3 },
      { keyId: 'k1', accountId: ACCOUNT, day: day1, outcome: 'ip_not_allowed', count: 2 },
      { keyId: 'k1', accountId: ACCOUNT, day: day2, outcome: 'expired_api_key', count: 4 },
      { keyId: 'k2', accountId: ACCOUNT, day: '2000-01-01', outcome: 'allowed', count: 9 },
      { keyId: 'k3', accountId: ACCOUNT, day: day2, outcome: 'allowed', count: 1 },
    ],
    activity: [],
  });
  const totals = await fx.store.getDailyTotalsOfKeys(['k1', 'k2', 'kx'], day1, day2);
  expect(totals.map((t) => `${t.keyId} ${t.day} ${t.total}`).sort()).toEqual([`k1 ${day1} 2`, `k1 ${day2} 7`]);
  expect(await fx.store.getDailyTotalsOfKeys([], day1, day2)).toEqual([]);
}

async function lastAllowedUse({ fx, expect }: Context): Promise<void> {
  let now = Date.parse('2026-03-02T10:00:00Z');
  const clock = () => now;
  const keys = new KeyManager({ store: fx.keys, clock });
  const recorder = new UsageRecorder({ store: fx.keys, intervalMs: 0, clock, spike: false });
  const send = (secret: string, ip: string) =>
    authenticate({ headers: { 'x-api-key': secret }, ip }, fx.keys, { onResult: recorder.record });
  const used = await keys.create({ accountId: ACCOUNT, name: 'used', mode: 'test' });
  const refusedOnly = await keys.create({
    accountId: ACCOUNT,
    name: 'fenced',
    mode: 'test',
    allowedIps: ['203.0.113.0/24'],
  });
  expect(await send(used.secret, '203.0.113.9')).toMatchObject({ status: 200 });
  const allowedAt = new Date(now).toISOString();
  await recorder.flush();
  now += 60_000;
  await keys.revoke(used.key.id);
  expect(await send(used.secret, '198.51.100.1')).toMatchObject({ status: 401, code: 'revoked_api_key' });
  expect(await send(refusedOnly.secret, '198.51.100.1')).toMatchObject({ status: 403, code: 'ip_not_allowed' });
  await recorder.flush();
  const ids = [used.key.id, refusedOnly.key.id, 'key_never_seen'];
  const lastUse = { keyId: used.key.id, lastUsedAt: allowedAt, lastUsedIp: '203.0.113.9' };
  expect(await fx.store.getActivityOfKeys(ids)).toEqual([lastUse]);
  expect(await fx.store.getActivityOfKeys([])).toEqual([]);
  // The refusals are counted all the same.
  const totals = await fx.store.getDailyTotalsOfKeys(ids, '2026-03-02', '2026-03-02');
  const named = totals.map((t) => `${t.keyId === used.key.id ? 'used' : 'fenced'} ${t.total}`);
  expect(named.sort()).toEqual(['fenced 1', 'used 2']);
}

async function tokenOnce({ fx, peer, expect }: Context): Promise<void> {
  const until = new Date(Date.now() + 60_000).toISOString();
  expect(await fx.store.isTokenUsed('sign-in:t1')).toBe(false);
  expect(await fx.store.markTokenUsed('sign-in:t1', until)).toBe(true);
  expect(await peer.markTokenUsed('sign-in:t1', until)).toBe(false);
  expect(await fx.store.markTokenUsed('sign-in:t1', until)).toBe(false);
  expect(await peer.isTokenUsed('sign-in:t1')).toBe(true);
  expect(await peer.isTokenUsed('sign-in:t2')).toBe(false);
}

async function tokenRace({ fx, peer, expect }: Context): Promise<void> {
  const until = new Date(Date.now() + 60_000).toISOString();
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => (i % 2 ? peer : fx.store).markTokenUsed('sign-in:race', until)),
  );
  expect(results.filter(Boolean)).toHaveLength(1);
}

async function tokenExpiry({ fx, expect, patience }: Context): Promise<void> {
  expect(await fx.store.markTokenUsed('session:short', new Date(Date.now() + 200).toISOString())).toBe(true);
  expect(await fx.store.isTokenUsed('session:short')).toBe(true);
  await sleep(250);
  const used = () => fx.store.isTokenUsed('session:short');
  expect(await poll(used, (yes) => !yes, Date.now() + patience)).toBe(false);
  // An expired record is no obstacle: the id may be recorded again.
  expect(await fx.store.markTokenUsed('session:short', new Date(Date.now() + 60_000).toISOString())).toBe(true);
}

/**
 * The behaviour every `DashboardStore` must have, as a test suite a host runs against its own: pages
 * of an account's keys newest first (ties by id) with the total, the search (name, hint or id,
 * case-insensitive, `%` a plain character), `status` and `mode` filters; per-day totals of many keys;
 * the last ALLOWED use of many keys (a 401 after an allowed request does not move it, a key only ever
 * refused has none); single-use tokens recorded once (of 20 concurrent calls through two instances
 * exactly one wins) and forgotten after their expiry. The factory gives a fresh, empty backend per test.
 *
 * @example
 * import { describe, it, expect, beforeEach, afterEach } from 'vitest';
 * import { describeDashboardStoreContract } from 'keygate/testing';
 * describeDashboardStoreContract('MyDashboardStore', async () => {
 *   const keys = new MyKeyStore(await freshDb());
 *   return { keys, store: new MyDashboardStore(keys) };
 * }, { describe, it, expect, beforeEach, afterEach });
 */
export function describeDashboardStoreContract(
  name: string,
  factory: () => Promise<DashboardStoreFixture>,
  t: ContractTestApi,
  options: DashboardStoreContractOptions = {},
): void {
  const patience = options.patience ?? 10_000;
  const cases: ReadonlyArray<Case<Context>> = [
    ["pages an account's keys newest first (ties by id), with how many there are", pagesNewestFirst],
    ['filters by text in the name, hint or id (any case), by status and by mode', filters],
    ['adds up the requests of many keys per day, every outcome together', addsUpDays],
    [
      'reports the last allowed use only: a later refusal does not move it, a key only refused has none',
      lastAllowedUse,
    ],
    ['records a token once: true for the first call only, seen by another instance', tokenOnce],
    ['of 20 concurrent calls through two instances, exactly one records a token', tokenRace],
    ['forgets a token once it has expired, and may record it again', tokenExpiry],
    ...DASHBOARD_RECORD_CASES,
  ];
  const contextOf = (fx: DashboardStoreFixture) => ({ fx, peer: fx.peer ?? fx.store, expect: t.expect, patience });
  describeCases(t, `dashboard store contract: ${name}`, factory, contextOf, cases);
}
