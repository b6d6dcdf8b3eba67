import type { AuditChanges } from 'keygate';

// An audit entry's changes in one line of text, for the dashboard's "History" tables and the CLI's
// `keygate audit`: `name: ci → ci-2; allowedIps: 203.0.113.0/24 → any address`. A field with no
// before (a new key's) shows its value alone: `name ci; mode live`.

// The most characters of one value shown; a longer one is cut, with `…` (--json has it whole).
const VALUE_WIDTH = 60;

// Fields in this order whatever order a backend returns them in (PostgreSQL's jsonb sorts its own way).
const ORDER = [
  'name',
  'mode',
  'status',
  'permissions',
  'allowedIps',
  'expiresAt',
  'rateLimit',
  'metadata',
  'rotatedTo',
];
const rank = (field: string) => {
  const at = ORDER.indexOf(field);
  return at === -1 ? ORDER.length : at;
};

const EMPTY_LIST: Record<string, string> = { allowedIps: 'any address', permissions: 'none' };

function shown(field: string, value: unknown): string {
  let text: string;
  if (value === null || value === undefined) text = field === 'expiresAt' ? 'never' : 'none';
  else if (Array.isArray(value))
    text = value.length === 0 ? (EMPTY_LIST[field] ?? 'none') : value.map(String).join(', ');
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  return text.length > VALUE_WIDTH ? `${text.slice(0, VALUE_WIDTH - 1)}…` : text;
}

/**
 * The changes of an audit entry as one line; `''` when there are none.
 *
 * @example
 * summarizeChanges({ name: { before: 'ci', after: 'ci-2' } }) // 'name: ci → ci-2'
 */
export function summarizeChanges(changes: AuditChanges | undefined): string {
  return Object.entries(changes ?? {})
    .sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
    .map(([field, { before, after }]) =>
      before === null || before === undefined
        ? `${field} ${shown(field, after)}`
        : `${field}: ${shown(field, before)} → ${shown(field, after)}`,
    )
    .join('; ');
}

/**
 * Who did it, in a few words: `cli alice`, `dashboard acct_1`, `api`.
 *
 * @example
 * actorText({ type: 'cli', id: 'alice' }) // 'cli alice'
 */
export function actorText(actor: { type: string; id?: string }): string {
  return actor.id ? `${actor.type} ${actor.id}` : actor.type;
}
