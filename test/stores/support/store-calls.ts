import type { ApiKeyRecord, WritableKeyStore } from 'keygate';
import type { UsageStore } from 'keygate/store-kit';

const now = '2026-11-22T12:00:00.000Z';

/** A well-formed record no store holds yet, for writes that must reach the backing service. */
export const NEW_RECORD: ApiKeyRecord = Object.freeze({
  id: 'key_failing',
  hash: 'f'.repeat(64),
  accountId: 'acct_failing',
  name: 'failing',
  mode: 'test',
  status: 'active',
  permissions: [],
  allowedIps: [],
  hint: 'mk_test_…abcd',
  createdAt: now,
  updatedAt: now,
  expiresAt: null,
  revokedAt: null,
  rotatedFrom: null,
  rotatedTo: null,
  metadata: {},
  version: 1,
});

/** Every method of a shared store that talks to its service, as a table for `it.each`. */
export const STORE_CALLS: [string, (store: WritableKeyStore & UsageStore) => Promise<unknown>][] = [
  ['findByHash', (s) => s.findByHash(NEW_RECORD.hash)],
  ['findById', (s) => s.findById(NEW_RECORD.id)],
  ['listByAccount', (s) => s.listByAccount(NEW_RECORD.accountId)],
  ['insert', (s) => s.insert(NEW_RECORD)],
  ['update', (s) => s.update(NEW_RECORD.id, { name: 'renamed', updatedAt: now })],
  ['update with ifVersion', (s) => s.update(NEW_RECORD.id, { name: 'renamed', updatedAt: now }, { ifVersion: 1 })],
  [
    'addUsage',
    (s) =>
      s.addUsage({
        counts: [
          { keyId: NEW_RECORD.id, accountId: NEW_RECORD.accountId, day: '2026-11-22', outcome: 'allowed', count: 1 },
        ],
        activity: [],
      }),
  ],
  ['getUsage', (s) => s.getUsage(NEW_RECORD.id, '2026-11-01', '2026-11-30')],
  ['getActivity', (s) => s.getActivity(NEW_RECORD.id)],
];
