#!/usr/bin/env node
// `npm run size` (also run by `npm run build`): the min+gzip size of each entry point as a user's
// bundler would ship it for the web (esbuild, minified, `#digest` = the Web Crypto module). An
// adapter's line counts the adapter alone: `keygate` (shared by every entry), frameworks and
// database clients stay external. The core line bundles its own dependencies (none since the cache has its own map). Exits 1 if
// the core grows past its budget.
//   node scripts/size.mjs --markdown <file>   also writes the table as Markdown to <file> (the docs
//                                              site includes it, so its numbers come from this run)
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { entryPoints } from './entry-points.mjs';

const root = new URL('..', import.meta.url).pathname;
const pkg = (await import('../package.json', { with: { type: 'json' } })).default;
const peers = Object.keys(pkg.peerDependencies ?? {});

/**
 * Budgets in bytes, min+gzip. The core is what every user ships; keep it small. The root line grew by
 * about 2 kB with KeyManager.import, throttle reservations and verdicts for records changed in place.
 * Per-key rate limits (check row 9) added about 2.6 kB to `authenticate` and 1.5 kB to the root: the
 * option's validation and step, and the per-process fallback that a shared limiter gets (which needs
 * the memory limiter) cannot be shaken out of `authenticate`, since the option decides at run time.
 * The `telemetry` option (instrument creation, the lookup span) adds about 0.8 kB to `authenticate` and
 * 1.7 kB to the root for the same reason. Structured validation (every refused field and list entry
 * as an issue with a stable reason, `KeyManager.check`, the rules on names' characters) added about
 * 0.95 kB to the root and 0.04 kB to `authenticate` (the allow-list parser's reasons). Redacting
 * every string property of every error (not just the message), and reading named capabilities instead
 * of properties, took `authenticate` from 9.95 to 10.05 kB: its budget is 10.25 kB since.
 * `MemoryCreditLedger` (row 10: the ledger, its argument checks and `CreditLedgerUnavailableError`) adds
 * about 1.45 kB to the root and nothing to `authenticate`: the root's budget is 26.50 kB since.
 * Check row 10 in the request path (the `credits` option's validation, the hold step with its 402, 500
 * and 503, `credits.low` and `credits.exhausted`, the credits counter, the three denials' texts) adds
 * about 1.25 kB to `authenticate` and to the root: like the rate limit's, it cannot be shaken out of
 * `authenticate`, since the option decides at run time. Budgets: 27.75 kB and 11.40 kB since.
 * The audit log (`MemoryKeyStore` holds one; the entry checks that keep secrets out of it, time-ordered
 * ids, and the `KeyManager`'s writes and `audit()`) adds about 2.5 kB to the root and 0.08 kB to
 * `authenticate`: the root's budget is 29.00 kB since.
 * The key lifecycle (round 3) added 0.27 kB to `authenticate` (the `from` option: reading
 * `Authorization: Bearer`, which the option decides at run time, so it cannot be shaken out; the
 * `key_suspended` denial and check) and 0.60 kB to the root (`KeyManager.suspend`, `resume`, the
 * rotation grace and their checks): budgets raised by as much since.
 * `KeyManager.findBySecret` (for `keygate/leaks`: the offline format check, then the digest with the
 * manager's pepper) took the root just past 31.25 kB: its budget is 31.50 kB since.
 * The outbox (round 3): `KeyManager` hands each key event to the store's outbox with its write (the
 * event's checks and scrubbing, `outboxEventOf`), about 0.5 kB of the root; the outboxes, the
 * dispatcher and `verifyWebhook` live in `keygate/webhooks` and the backends. Root budget 31.75 kB since.
 * Several limits per key and limits shared by an account (row 9: named limits and their checks, the
 * plan of a request's limits in counting order, the count across them, the account option and its
 * lookup, the multi-policy header fields) add about 1.1 kB to `authenticate` and to the root, which
 * the option decides at run time, so they cannot be shaken out: budgets 33.25 kB and 12.90 kB since.
 * The cache's own bounded map replaced lru-cache (the lean cached key): the root fell to 28.0 kB, its
 * budget to 28.25 kB.
 * Limits and credits answered at once from a leased slice (the `immediateLimits` and
 * `immediateCredits` capabilities, asked before the promise path, and the hold's result built field
 * by field) took `authenticate` to 12.98 kB and the root to 28.22 kB: budgets 13.10 and 28.50 kB since.
 * `LeasedRateLimiter`, `LeasedCreditLedger` and `LeasableMemoryRateLimiter` are application classes,
 * so they moved from `keygate/store-kit` to the root (round 4's surface rule): the root's line, which
 * bundles every export, grew by about 3.9 kB to 32.25 kB; `authenticate` alone did not change (they
 * shake out). Root budget 32.50 kB since.
 * One whole-number check (`validWholeNumber`) in place of eight private ones: every refusal names its
 * field, says the range and describes the refused value without quoting it (it may be a pasted key).
 * `authenticate` reaches it through the rate-limit and cache options and grew by 0.15 kB to 13.21 kB:
 * its budget is 13.25 kB since.
 * Options are checked, never ignored (round 4): `resolveAuthOptions` refuses a member no options
 * object has, naming the nearest known one ("did you mean `permissions`?", an edit distance), which
 * the request path's option resolution always runs: `authenticate` grew by 0.24 kB to 13.49 kB, its
 * budget is 13.50 kB since.
 * The `telemetry` options (`meter`, `tracer`, `attributes` and its four members) refuse an unknown
 * member too, when telemetry is created (0.06 kB of `authenticate`).
 * Every class, manager input and ledger option of the root refuses unknown members too, the immediate
 * ledger and limiter paths check their arguments, and names refuse tag characters and blank-looking
 * ones: the root grew by 0.54 kB to 33.04 kB and `authenticate` (the shared options issue and the
 * strict rate-limit check) by 0.07 kB to 13.57 kB; budgets 33.25 kB and 13.75 kB since.
 * Rate-limit bounds under outages (round 4): the per-process fallback counts on from each key's shared
 * window as last seen, and a take answered after its deadline is given back, took `authenticate` by
 * 0.19 kB to 13.77 kB and the root (with the leased limiter's no-slack takes) by 0.38 kB to 33.44 kB:
 * budgets 33.50 kB and 14.00 kB since.
 * A key write's audit entry made before the write and carried in it (`WriteOptions.audit`, checked
 * again by the memory store with `validAuditEntries`) took the root from 33.06 to 33.42 kB: together with the
 * outage bounds above, the root is budgeted at 34.00 kB since.
 * `LeasedCreditLedger` bounds what a crash leaves unbilled (each account and key's unconfirmed
 * slices, deferred next slices, settles read against the hold's lapse): 0.86 kB more; with the
 * three reliability changes above together the root is budgeted at 35.00 kB since.
 * Retention (round 4): the memory store's and audit log's `prune`, its argument check and the
 * `UsageRecorder`'s daily prune: 0.40 kB more. With all four round-4 reliability changes the root is
 * budgeted at 35.50 kB since.
 */
const BUDGET = { keygate: 35_500, 'keygate (authenticate only)': 14_000 };

async function measure(contents, external) {
  const result = await build({
    stdin: { contents, resolveDir: root, loader: 'js' },
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['worker', 'browser'],
    mainFields: ['module', 'main'],
    target: 'es2022',
    external: [...external, 'node:*'],
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  return { min: code.length, gzip: gzipSync(code, { level: 9 }).length };
}

const rows = [
  ['keygate', await measure(`export * from 'keygate';`, peers)],
  ['keygate (authenticate only)', await measure(`export { authenticate } from 'keygate';`, peers)],
  [
    'keygate (a typical server)',
    await measure(`export { authenticate, CachedKeyStore, KeyManager, MemoryKeyStore } from 'keygate';`, peers),
  ],
];
const adapterOnly = ['keygate', ...peers, ...peers.map((peer) => `${peer}/*`)];
// One line per subpath of package.json `exports` (scripts/entry-points.mjs), in its order.
for (const entry of entryPoints(pkg)) {
  if (entry.subpath === '.') continue;
  // The dist file itself: marking `keygate` external would also mark `keygate/<subpath>` external.
  rows.push([entry.importName, await measure(`export * from './dist/${entry.output}.js';`, adapterOnly)]);
}

const kB = (bytes) => `${(bytes / 1000).toFixed(2)} kB`.padStart(9);
console.log('bundle size (esbuild --minify, gzip -9; adapters without the shared core):');
let over = false;
for (const [name, { min, gzip }] of rows) {
  const budget = BUDGET[name];
  const flag =
    budget === undefined
      ? ''
      : gzip > budget
        ? `  OVER BUDGET (${kB(budget).trim()})`
        : `  (budget ${kB(budget).trim()})`;
  over ||= budget !== undefined && gzip > budget;
  console.log(`  ${name.padEnd(28)} ${kB(gzip)} min+gzip ${kB(min)} min${flag}`);
}
if (over) process.exitCode = 1;

/** The rows as a Markdown table, with the budgets, for the docs site. */
function markdownTable() {
  const kBCell = (bytes) => `${(bytes / 1000).toFixed(2)} kB`;
  const lines = [
    '| import | min+gzip | min | budget (min+gzip) |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map(([name, { min, gzip }]) => {
      const budget = BUDGET[name];
      const [entry, detail] = name.split(' (');
      const label = detail ? `\`${entry}\` (${detail}` : `\`${entry}\``;
      return `| ${label} | ${kBCell(gzip)} | ${kBCell(min)} | ${budget === undefined ? '' : kBCell(budget)} |`;
    }),
  ];
  return `${lines.join('\n')}\n`;
}

const markdownAt = process.argv.indexOf('--markdown');
if (markdownAt >= 0) {
  const file = process.argv[markdownAt + 1];
  if (!file) throw new Error('--markdown needs the file to write, e.g. --markdown docs/.generated/bundle-size.md');
  mkdirSync(dirname(resolve(file)), { recursive: true });
  writeFileSync(file, markdownTable());
}
