// Setup file of vitest.mutation.config.mjs: runs only the cases of a contract suite over memory or
// SQLite, and skips every other test of the included files (backend-specific tests, and the suites
// over PGlite, PostgreSQL or Redis that share a file with the memory one), so that the mutation
// score measures what the contract suites prove. A skipped test runs none of its hooks: no fixture
// is opened for it.
import { beforeEach } from 'vitest';

/** The title of a contract suite's describe block over a memory or SQLite implementation. */
const MEASURED = /^(key store|rate limiter|credit ledger|outbox|audit log|dashboard store) contract: (Memory|Sqlite)/;

beforeEach((context) => {
  for (let suite = context.task.suite; suite; suite = suite.suite) {
    if (MEASURED.test(suite.name)) return;
  }
  context.skip();
});
