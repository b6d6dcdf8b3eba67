// `keygate doctor`'s checks of an account's keys: allow lists, rate limits, age and use.
import { type KeyManager, type ManagedKey, UnsupportedError } from 'keygate';
import { formatDuration } from '../duration.js';
import { familiesAllowedWhole } from './allow-all.js';
import type { Finding } from './finding.js';

/** Which keys a policy flag (`--require-allow-list`, `--require-rate-limit`) makes a gap an error for. */
export type Requirement = 'live' | 'all' | undefined;

/** What `checkKeys` looks for. */
export interface KeyCheckOptions {
  /** Keys of these modes without an allow list are errors; other live keys without one, warnings. */
  readonly requireAllowList: Requirement;
  /** Keys of these modes without a rate limit of their own are errors; other live ones, warnings. */
  readonly requireRateLimit: Requirement;
  /** How long, in milliseconds, an active key may go without traffic before it is reported (90 days). */
  readonly unusedForMs: number;
  /** The time an expiry must lie after, in epoch milliseconds. */
  readonly now: number;
}

/** Days a key may go unused before `keygate doctor` reports it, by default: 90. */
export const DEFAULT_UNUSED_FOR_MS = 90 * 86_400_000;

function severityFor(key: ManagedKey, required: Requirement): 'error' | 'warn' | undefined {
  if (required === 'all' || (required === 'live' && key.mode === 'live')) return 'error';
  return key.mode === 'live' ? 'warn' : undefined;
}

const label = (key: ManagedKey) => `${key.mode} key "${key.name}" (${key.hint})`;

/**
 * Every key of `accountId` that still works (not revoked, not expired) checked for an allow list
 * (`key_no_allow_list`) that does not admit every address of a family (`key_allow_list_allows_all`:
 * `0.0.0.0/0`, `::/0`, or entries whose union covers IPv4 or IPv6 whole), a rate limit of its own (`key_no_rate_limit`) and its age
 * (`key_rotation_due`, from the manager's `rotationDue`); every active key for traffic within
 * `unusedForMs` (`key_unused`, as `keygate keys list --unused-for` finds them). Test keys are reported
 * only when a requirement names them (`all`). With nothing to report, one `keys` ok finding.
 *
 * @example
 * await checkKeys(manager, 'acct_1', { requireAllowList: 'live', requireRateLimit: undefined, unusedForMs: DEFAULT_UNUSED_FOR_MS, now: Date.now() });
 */
export async function checkKeys(manager: KeyManager, accountId: string, options: KeyCheckOptions): Promise<Finding[]> {
  const keys = await manager.list(accountId);
  const working = keys.filter(
    (k) => k.status !== 'revoked' && (k.expiresAt === null || Date.parse(k.expiresAt) > options.now),
  );
  const findings: Finding[] = [];
  for (const key of working) {
    const allow = severityFor(key, options.requireAllowList);
    if (allow && key.allowedIps.length === 0) {
      findings.push({
        id: 'key_no_allow_list',
        severity: allow,
        keyId: key.id,
        message: `${label(key)} has no allow list: it works from any address`,
        fix: `keygate keys update ${key.id} --allow <the client's address or CIDR> (repeat for each)`,
      });
    }
    const whole = allow && key.allowedIps.length > 0 ? familiesAllowedWhole(key.allowedIps) : [];
    if (allow && whole.length > 0) {
      const both = whole.length === 2;
      const every = both ? 'every IPv4 and IPv6 address' : `every ${whole[0]} address`;
      const from = both
        ? 'anywhere, as if it had no allow list'
        : `any ${whole[0]} address, as if it had no allow list there`;
      findings.push({
        id: 'key_allow_list_allows_all',
        severity: allow,
        keyId: key.id,
        message:
          `${label(key)} has an allow list that admits ${every} (${key.allowedIps.join(', ')}): ` +
          `it works from ${from}`,
        fix: `keygate keys update ${key.id} --allow <the client's address or CIDR> (repeat for each; the list replaces the old one)`,
      });
    }
    const limit = severityFor(key, options.requireRateLimit);
    if (limit && key.rateLimit === null) {
      findings.push({
        id: 'key_no_rate_limit',
        severity: limit,
        keyId: key.id,
        message: `${label(key)} has no rate limit of its own: only the service's default limits it, if it has one`,
        fix: `keygate keys update ${key.id} --rate-limit <N/DURATION, e.g. 100/1m>`,
      });
    }
    if (key.rotationDue && !key.rotatedTo) {
      findings.push({
        id: 'key_rotation_due',
        severity: 'warn',
        keyId: key.id,
        message: `${label(key)} is ${key.ageDays} days old and was never rotated`,
        fix: `keygate keys rotate ${key.id}, deploy the new key, then keygate keys rotation-status ${key.id}`,
      });
    }
  }
  const workingIds = new Set(working.map((k) => k.id));
  findings.push(...(await unusedKeys(manager, accountId, options.unusedForMs, workingIds)));
  if (findings.length === 0) {
    const count = working.length;
    const message =
      count === 0
        ? `account ${accountId} has no working keys (is the account id right?)`
        : `account ${accountId}: ${count} working key${count === 1 ? '' : 's'} checked, nothing to fix`;
    findings.push({ id: 'keys', severity: 'ok', message, fix: '' });
  }
  return findings;
}

async function unusedKeys(
  manager: KeyManager,
  accountId: string,
  unusedForMs: number,
  working: ReadonlySet<string>,
): Promise<Finding[]> {
  const since = formatDuration(unusedForMs);
  let unused: ManagedKey[];
  try {
    unused = await manager.list(accountId, { unusedForMs });
  } catch (err) {
    if (!(err instanceof UnsupportedError)) throw err;
    return [
      {
        id: 'key_use_unknown',
        severity: 'warn',
        message: `the store keeps no usage statistics: keys unused for ${since} cannot be found`,
        fix: 'keep keys in a store with usage (PostgreSQL, PGlite, MySQL or MariaDB, SQLite, or Redis)',
      },
    ];
  }
  // An expired key is no longer in use either way: revoking it is housekeeping, not a finding.
  return unused
    .filter((key) => working.has(key.id))
    .map((key) => ({
      id: 'key_unused',
      severity: 'warn' as const,
      keyId: key.id,
      message: `${label(key)} has had no traffic for ${since} or more`,
      fix: `if nothing uses it any more: keygate keys revoke ${key.id} --quiet-for ${since}`,
    }));
}
