import type { AuditEntry, ManagedKey, RotationStatus, UsageReport } from 'keygate';
import { actorText, summarizeChanges } from '../dashboard/views/audit-changes.js';
import { formatDuration } from './duration.js';
import { formatRateLimit } from './rate-limit.js';

// A suspended key's time and reason, as lines of `formatKey`.
function suspension(key: ManagedKey): Array<[string, string]> {
  if (key.status !== 'suspended') return [];
  return [
    ['suspended', key.suspendedAt ?? ''],
    ['reason', key.suspendedReason ?? '(none given)'],
  ];
}

/** A key as a short block of `label: value` lines. */
export function formatKey(key: ManagedKey): string {
  const lines: Array<[string, string]> = [
    ['id', key.id],
    ['hint', key.hint],
    ['account', key.accountId],
    ['name', key.name],
    ['mode', key.mode],
    ['status', key.status + (key.revokedAt ? ` (${key.revokedAt})` : '')],
    ...suspension(key),
    ['permissions', key.permissions.join(', ') || '(none)'],
    ['allowed ips', key.allowedIps.join(', ') || '(any address)'],
    ['created', `${key.createdAt} (${key.ageDays} days ago${key.rotationDue ? ', rotation due' : ''})`],
    ['expires', key.expiresAt ?? 'never'],
    ['rate limit', key.rateLimit ? formatRateLimit(key.rateLimit) : 'default (no limit of its own)'],
  ];
  if (key.rotatedFrom) lines.push(['rotated from', key.rotatedFrom]);
  if (key.rotatedTo) lines.push(['rotated to', key.rotatedTo]);
  return lines.map(([label, value]) => `  ${label.padEnd(12)} ${value}`).join('\n');
}

/** The widest a name gets in the table; a longer one is cut, with `…` (`keys show` prints it whole). */
const NAME_WIDTH = 32;

/** An ISO timestamp to the minute, in UTC: `2026-11-24 16:31`. */
function minute(iso: string): string {
  return new Date(iso).toISOString().slice(0, 16).replace('T', ' ');
}

/**
 * Keys as a table, one line each: id, name, mode, status, hint, created and last used (UTC, to the
 * minute), under a header line; `lastUsed` maps a key id to its last use (absent or null: never).
 *
 * @example
 * formatKeyTable(keys, new Map([[keys[0].id, '2026-11-24T16:31:05.000Z']]));
 * // ID                        NAME  MODE  STATUS  HINT           CREATED (UTC)     LAST USED (UTC)
 * // key_AxqlFECAiVvjuluiMkfI  ci    test  active  mk_test_…NgG3  2026-11-20 09:12  2026-11-24 16:31
 */
export function formatKeyTable(keys: readonly ManagedKey[], lastUsed: ReadonlyMap<string, string | null>): string {
  const cut = (name: string) => (name.length > NAME_WIDTH ? `${name.slice(0, NAME_WIDTH - 1)}…` : name);
  return columns([
    ['ID', 'NAME', 'MODE', 'STATUS', 'HINT', 'CREATED (UTC)', 'LAST USED (UTC)'],
    ...keys.map((key) => {
      const used = lastUsed.get(key.id);
      return [
        key.id,
        cut(key.name),
        key.mode,
        key.status,
        key.hint,
        minute(key.createdAt),
        used ? minute(used) : 'never',
      ];
    }),
  ]);
}

/** Rows as columns two spaces apart, each as wide as its widest cell; no trailing spaces. */
function columns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function minutes(ms: number): string {
  return `${Math.floor(ms / 60_000)} min`;
}

/**
 * Audit entries as a table, one line each: when (UTC, to the second), action, key, actor and the
 * changes in one line (see `summarizeChanges`).
 *
 * @example
 * formatAuditTable(entries);
 * // WHEN (UTC)           ACTION       KEY                       ACTOR      CHANGES
 * // 2026-11-24 16:31:05  key.updated  key_AxqlFECAiVvjuluiMkfI  cli alice  name: ci → ci-2
 */
export function formatAuditTable(entries: readonly AuditEntry[]): string {
  return columns([
    ['WHEN (UTC)', 'ACTION', 'KEY', 'ACTOR', 'CHANGES'],
    ...entries.map((e) => [
      e.at.slice(0, 19).replace('T', ' '),
      e.action,
      e.keyId ?? '-',
      actorText(e.actor),
      summarizeChanges(e.changes),
    ]),
  ]);
}

/** Audit entries as blocks of `label: value` lines, one block per entry. */
export function formatAuditDetails(entries: readonly AuditEntry[]): string {
  return entries
    .map((e) => {
      const lines: Array<[string, string]> = [
        ['id', e.id],
        ['at', e.at],
        ['action', e.action],
        ['key', e.keyId ?? '-'],
        ['actor', actorText(e.actor)],
      ];
      if (e.address) lines.push(['address', e.address]);
      const changes = summarizeChanges(e.changes);
      if (changes) lines.push(['changes', changes]);
      return lines.map(([label, value]) => `  ${label.padEnd(8)} ${value}`).join('\n');
    })
    .join('\n\n');
}

/** Where a rotation stands, with the next step to take. */
export function formatRotationStatus(s: RotationStatus): string {
  const next = {
    created: 'deploy the new key, then check again',
    switched: `wait until the old key has been quiet for ${formatDuration(s.quietForMs)}`,
    confirmed: `keygate keys revoke ${s.oldKeyId} --quiet-for ${formatDuration(s.quietForMs)}`,
    revoked: 'done',
  }[s.step];
  return [
    `  old key      ${s.oldKeyId} (last used ${s.oldKeyLastUsedAt ?? 'never'}, quiet for ${minutes(s.oldKeyQuietForMs)})`,
    `  new key      ${s.newKeyId} (${s.newKeyUsed ? `used, last ${s.newKeyLastUsedAt}` : 'not used yet'})`,
    `  step         ${s.step}${s.safeToRevoke ? ' (safe to revoke the old key)' : ''}`,
    `  next         ${next}`,
  ].join('\n');
}

/** A usage report as a per-day table with totals. */
export function formatUsage(r: UsageReport): string {
  const reasons = (by: UsageReport['deniedBy']) =>
    Object.entries(by)
      .map(([code, n]) => `${code} ${n}`)
      .join(', ');
  const rows = r.days.map(
    (d) =>
      `  ${d.day}  allowed ${String(d.allowed).padStart(7)}  denied ${String(d.denied).padStart(6)}  ${reasons(d.deniedBy)}`,
  );
  return [
    `usage of ${r.keyId}, ${r.from} to ${r.to}`,
    ...(rows.length ? rows : ['  no traffic']),
    `  total       allowed ${String(r.allowed).padStart(7)}  denied ${String(r.denied).padStart(6)}  ${reasons(r.deniedBy)}`,
    `  last used   ${r.lastUsedAt ?? 'never'}${r.lastUsedIp ? ` from ${r.lastUsedIp}` : ''}`,
  ].join('\n');
}
