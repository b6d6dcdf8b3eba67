import { type ApiKeyRecord, hashKey } from 'keygate';
import type { DashboardStore, KeyPatch } from 'keygate/store-kit';
import { bareRecord, FILL, fullRecord } from './contract-full-record.js';
import type { Case, Expect } from './contract-kit.js';
import type { DashboardStoreFixture } from './contract-types.js';

/** What a case of the dashboard-store contract works with: a fresh fixture and its peer (or its store). */
export interface DashboardContext {
  readonly fx: DashboardStoreFixture;
  readonly peer: DashboardStore;
  readonly expect: Expect;
  /** How long to wait for a token's expiry to show, in milliseconds. */
  readonly patience: number;
}

const ACCOUNT = 'acct_dashboard_full';

async function keepsEveryKeyField({ fx, peer, expect }: DashboardContext): Promise<void> {
  const full = fullRecord('key_dash_full', await hashKey('mk_live_dashboard_full_record_secret_0'), ACCOUNT);
  const bare = bareRecord('key_dash_bare', await hashKey('mk_test_dashboard_bare_record_secret_0'), ACCOUNT);
  await fx.keys.insert(full);
  await fx.keys.insert(bare);
  // Newest first: the full record was created later.
  const page = (store: DashboardStore) => store.listKeysPage(ACCOUNT, { offset: 0, limit: 10 });
  for (const store of [fx.store, peer]) expect(await page(store)).toEqual({ records: [full, bare], total: 2 });
  // Every empty field filled, and revoked rather than suspended.
  const revokedAt = '2026-02-01T00:00:00.002Z';
  const patch: KeyPatch = { ...FILL, status: 'revoked', revokedAt, suspendedAt: null, suspendedReason: null };
  const revoked = { ...bare, ...patch, version: 2 } as ApiKeyRecord;
  await fx.keys.update(bare.id, patch);
  for (const store of [fx.store, peer]) {
    expect(await page(store)).toEqual({ records: [full, revoked], total: 2 });
    const suspended = await store.listKeysPage(ACCOUNT, { offset: 0, limit: 10, status: 'suspended' });
    expect(suspended).toEqual({ records: [full], total: 1 });
    const found = await store.listKeysPage(ACCOUNT, { offset: 0, limit: 10, search: 'FILLED' });
    expect(found).toEqual({ records: [revoked], total: 1 });
  }
}

async function keepsEveryUsageField({ fx, peer, expect }: DashboardContext): Promise<void> {
  const counts = [
    { keyId: 'key_use_a', accountId: ACCOUNT, day: '2026-03-01', outcome: 'allowed', count: 7 },
    { keyId: 'key_use_a', accountId: ACCOUNT, day: '2026-03-01', outcome: 'ip_not_allowed', count: 2 },
    { keyId: 'key_use_a', accountId: ACCOUNT, day: '2026-03-02', outcome: 'rate_limited', count: 1 },
    { keyId: 'key_use_b', accountId: ACCOUNT, day: '2026-03-02', outcome: 'allowed', count: 4 },
  ] as const;
  const activity = [
    { keyId: 'key_use_a', lastUsedAt: '2026-03-02T10:11:12.345Z', lastUsedIp: '2001:db8::9' },
    { keyId: 'key_use_b', lastUsedAt: '2026-03-02T01:02:03.004Z', lastUsedIp: null },
  ];
  await fx.keys.addUsage({ counts, activity });
  const byDayAndOutcome = (a: { day: string; outcome: string }, b: { day: string; outcome: string }) =>
    `${a.day}${a.outcome}` < `${b.day}${b.outcome}` ? -1 : 1;
  const usage = await fx.keys.getUsage('key_use_a', '2026-03-01', '2026-03-02');
  expect([...usage].sort(byDayAndOutcome)).toEqual(counts.slice(0, 3));
  expect(await fx.keys.getActivity('key_use_a')).toEqual(activity[0]);
  expect(await fx.keys.getActivity('key_use_b')).toEqual(activity[1]);
  for (const store of [fx.store, peer]) {
    const byKey = (a: { keyId: string }, b: { keyId: string }) => (a.keyId < b.keyId ? -1 : 1);
    expect([...(await store.getActivityOfKeys(['key_use_b', 'key_use_a']))].sort(byKey)).toEqual(activity);
    const totals = await store.getDailyTotalsOfKeys(['key_use_a', 'key_use_b'], '2026-03-01', '2026-03-02');
    const byKeyAndDay = (a: { keyId: string; day: string }, b: { keyId: string; day: string }) =>
      `${a.keyId}${a.day}` < `${b.keyId}${b.day}` ? -1 : 1;
    expect([...totals].sort(byKeyAndDay)).toEqual([
      { keyId: 'key_use_a', day: '2026-03-01', total: 9 },
      { keyId: 'key_use_a', day: '2026-03-02', total: 1 },
      { keyId: 'key_use_b', day: '2026-03-02', total: 4 },
    ]);
  }
}

/** Every stored field of the rows a dashboard store reads: key records, daily totals and last uses. */
export const DASHBOARD_RECORD_CASES: ReadonlyArray<Case<DashboardContext>> = [
  [
    'pages every field of a key, set and empty, as written and after an update, through either instance',
    keepsEveryKeyField,
  ],
  [
    'keeps every field of a usage count and a last use (with and without an address), read by either instance',
    keepsEveryUsageField,
  ],
];
