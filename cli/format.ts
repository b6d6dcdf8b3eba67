import type { ManagedKey, RotationStatus, UsageReport } from 'keygate';
import { formatDuration } from './duration.js';
import { formatRateLimit } from './rate-limit.js';

/** A key as a short block of `label: value` lines. */
export function formatKey(key: ManagedKey): string {
  const lines: Array<[string, string]> = [
    ['id', key.id],
    ['hint', key.hint],
    ['account', key.accountId],
    ['name', key.name],
    ['mode', key.mode],
    ['status', key.status + (key.revokedAt ? ` (${key.revokedAt})` : '')],
    ['permissions', key.permissions.join(', ') || '(none)'],
    ['allowed ips', key.allowedIps.join(', ') || '(any address)'],
    ['created', `${key.createdAt} (${key.ageDays} days ago${key.rotationDue ? ', rotation due' : ''})`],
    ['expires', key.expiresAt ?? 'never'],
    ['rate limit', formatRateLimit(key.rateLimit)],
  ];
  if (key.rotatedFrom) lines.push(['rotated from', key.rotatedFrom]);
  if (key.rotatedTo) lines.push(['rotated to', key.rotatedTo]);
  return lines.map(([label, value]) => `  ${label.padEnd(12)} ${value}`).join('\n');
}

function minutes(ms: number): string {
  return `${Math.floor(ms / 60_000)} min`;
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
