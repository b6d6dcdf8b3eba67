import type { InputIssue } from '#errors';
import type { KeyMetadata, KeyMode, KeyRateLimit } from '../types.js';
import {
  validAccountId,
  validExpiry,
  validMetadata,
  validMode,
  validName,
  validPermissions,
} from '../validate/fields.js';
import { attempt, type InputCheck, issue } from '../validate/issues.js';
import { optionNameIssue } from '../validate/options.js';
import { validAllowList, validRateLimit } from './key-limits.js';

/**
 * A key's fields as `KeyManager` writes them: trimmed, canonical, duplicates removed, defaults filled in.
 *
 * @example
 * const checked = KeyManager.check({ accountId: 'acct_1', name: ' ci ', mode: 'test', allowedIps: ['2001:DB8::/32'] });
 * if (checked.ok) checked.value; // { name: 'ci', allowedIps: ['2001:db8::/32'], permissions: [], expiresAt: null, ... }
 */
export interface ValidKeyInput {
  accountId: string;
  name: string;
  mode: KeyMode;
  permissions: string[];
  /** Canonical entries: `2001:DB8::/32` becomes `2001:db8::/32`. */
  allowedIps: string[];
  /** ISO 8601, or `null` for never. */
  expiresAt: string | null;
  metadata: KeyMetadata;
  rateLimit: KeyRateLimit | null;
}

/**
 * Options of `KeyManager.check`.
 *
 * @example
 * KeyManager.check({ name: form.name, allowedIps: lines }, { now: clock(), partial: true });
 */
export interface KeyCheckOptions {
  /** The time an expiry must lie after, in epoch milliseconds. @default Date.now() */
  now?: number;
  /**
   * Check only the fields that are present (not `undefined`), as for an update or a single field;
   * otherwise every field of a new key is checked, absent optional ones taking their defaults.
   * @default false
   */
  partial?: boolean;
}

type Field = keyof ValidKeyInput;

// Every field's check, in the order a new key's fields are reported; `fallback` fills in an absent
// optional field of a new key (undefined: the field is required).
const FIELDS: ReadonlyArray<{ field: Field; check: (value: unknown, now: number) => unknown; fallback?: unknown }> = [
  { field: 'accountId', check: validAccountId },
  { field: 'name', check: validName },
  { field: 'permissions', check: validPermissions, fallback: [] },
  { field: 'allowedIps', check: validAllowList, fallback: [] },
  { field: 'expiresAt', check: validExpiry, fallback: null },
  { field: 'metadata', check: validMetadata, fallback: {} },
  { field: 'rateLimit', check: validRateLimit, fallback: null },
  { field: 'mode', check: validMode },
];

/**
 * Every field a key's input may carry, in the order they are checked.
 *
 * @example
 * KEY_FIELDS.includes('allowedIps') // true
 */
// A literal, not `FIELDS.map(...)`: a call at the top of a module would keep it in every bundle.
export const KEY_FIELDS: readonly Field[] = [
  'accountId',
  'name',
  'permissions',
  'allowedIps',
  'expiresAt',
  'metadata',
  'rateLimit',
  'mode',
];

/**
 * Checks a key's fields the way `KeyManager` does before it writes, without throwing: every bad
 * field is reported, and every bad entry of a list, each as an `InputIssue` (`field`, `index`,
 * `reason`, `message`). With `partial`, a field that is absent is skipped instead of taking its
 * default or being missed. A member that is no key field (nor one of `extra`) is an issue of reason
 * `unknown_option`, reported first, with "did you mean" the nearest field (`allowIps` ->
 * `allowedIps`): a misspelt allow list must never make a key that works from any address.
 *
 * @example
 * checkKeyFields({ accountId: 'acct_1', name: ' ci ', mode: 'test' }, { now: Date.now() })
 * // { ok: true, value: { accountId: 'acct_1', name: 'ci', mode: 'test', permissions: [], ... } }
 */
export function checkKeyFields(
  input: unknown,
  options: {
    now: number;
    partial?: boolean | undefined;
    skip?: Field | undefined;
    /** What takes the input, for the unknown-field message. @default 'KeyManager.check' */
    where?: string;
    /** Members the input may carry beside the key fields (`import`: `secret`, `digest`, `hint`). */
    extra?: readonly string[];
  },
): InputCheck<Partial<ValidKeyInput>> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { ok: false, issues: [issue('input', 'wrong_type', 'key input must be an object of fields')] };
  }
  const given = input as Record<string, unknown>;
  const value: Record<string, unknown> = {};
  const issues: InputIssue[] = [];
  const known = options.extra ? [...KEY_FIELDS, ...options.extra] : KEY_FIELDS;
  const unknown = optionNameIssue(given, known, options.where ?? 'KeyManager.check');
  if (unknown) issues.push(unknown);
  for (const { field, check, fallback } of FIELDS) {
    if (field === options.skip || (options.partial && given[field] === undefined)) continue;
    const raw = given[field] === undefined && fallback !== undefined ? fallback : given[field];
    const checked = attempt(() => check(raw, options.now));
    if (checked.ok) value[field] = checked.value;
    else for (const found of checked.issues) issues.push(found);
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: value as Partial<ValidKeyInput> };
}
