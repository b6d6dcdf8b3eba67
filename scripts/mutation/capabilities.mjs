// What `npm run mutation` mutates and which contract files it runs, per capability. Each capability
// names the implementations its contract suite proves (memory, and the SQLite backend on
// better-sqlite3) and the test files that run that suite on them. When a backend's files move, only
// this list changes.

/**
 * The capabilities, in the order `npm run mutation` runs them when given none.
 *
 * @example
 * CAPABILITIES.keys.mutate; // ['src/store/memory.ts', ...]
 */
export const CAPABILITIES = {
  keys: {
    title: 'key store',
    mutate: [
      'src/store/memory.ts',
      'src/store/apply-patch.ts',
      'backends/sql/key-store.ts',
      'backends/sql/key-record.ts',
      'backends/sql/change-poller.ts',
      'backends/sql/sqlite/keys.ts',
      'backends/sqlite/store.ts',
      'backends/sqlite/change-poller.ts',
    ],
    tests: ['test/stores/memory.test.ts', 'test/stores/sqlite.test.ts'],
  },
  limiter: {
    title: 'rate limiter',
    mutate: [
      'src/rate-limit/memory.ts',
      'src/store-kit/backend-rate-limiter.ts',
      'backends/sqlite/rate-limiter.ts',
      'backends/sqlite/sql/rate-limit.ts',
    ],
    tests: ['test/rate-limit/memory.test.ts', 'test/rate-limit/sqlite.test.ts'],
  },
  credits: {
    title: 'credit ledger',
    mutate: [
      'src/credits/memory.ts',
      'src/store-kit/backend-credit-ledger.ts',
      'backends/sql/credit-ledger-shell.ts',
      'backends/sqlite/credit-ledger.ts',
      'backends/sqlite/sql/credits.ts',
    ],
    tests: ['test/credits/memory.test.ts', 'test/credits/sqlite.test.ts'],
  },
  outbox: {
    title: 'outbox',
    mutate: [
      'src/outbox/memory.ts',
      'backends/sql/outbox.ts',
      'backends/sql/sqlite/outbox.ts',
      'backends/sqlite/outbox.ts',
    ],
    tests: ['test/outbox/memory.test.ts', 'test/outbox/sqlite.test.ts'],
  },
  audit: {
    title: 'audit log',
    mutate: ['src/audit/memory.ts', 'backends/sql/audit-log.ts', 'backends/sqlite/audit-log.ts'],
    tests: ['test/audit/memory.test.ts', 'test/audit/sqlite.test.ts'],
  },
  dashboard: {
    title: 'dashboard store',
    mutate: [
      'dashboard/memory-store.ts',
      'dashboard/token-ledger.ts',
      'backends/sql/dashboard-store.ts',
      'backends/sql/sqlite/dashboard.ts',
      'backends/sqlite/dashboard-store.ts',
    ],
    tests: ['test/stores/dashboard-store.test.ts', 'test/stores/sqlite-dashboard-store.test.ts'],
  },
};

/** Where each capability's reports go (gitignored): `reports/mutation/<name>/mutation.{json,html}`. */
export const REPORTS_DIR = 'reports/mutation';
