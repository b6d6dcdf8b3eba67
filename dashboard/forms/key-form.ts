import type { KeyMode } from 'keygate';
// Bundled from the sources (the dashboard is built as a kit): per-entry checks for inline messages.
import { parseAllowListEntry } from '../../src/ip/allow-list.js';

/** A per-key rate limit as keys carry it (`rateLimit` on the record and on create/update inputs). */
export interface RateLimitSetting {
  readonly limit: number;
  readonly windowMs: number;
}

/** The windows the form offers for a rate limit, in milliseconds. */
export const RATE_LIMIT_WINDOWS: ReadonlyArray<readonly [string, number]> = [
  ['second', 1_000],
  ['minute', 60_000],
  ['hour', 3_600_000],
  ['day', 86_400_000],
];

/** What a person typed into the key form, kept as typed so that a 422 can show it again. */
export interface KeyFormValues {
  name: string;
  mode: string;
  /** Ticked catalogue entries, or the lines of the permissions text field. */
  permissions: string[];
  /** The permissions text field as typed (no catalogue). */
  permissionsText: string;
  allowedIps: string;
  allowAny: boolean;
  /** `YYYY-MM-DD` or empty. */
  expires: string;
  rateLimit: string;
  rateLimitWindow: string;
}

/** A message per field that was refused; an empty object when the form is good. */
export type FieldErrors = Partial<
  Record<'name' | 'mode' | 'permissions' | 'allowedIps' | 'expires' | 'rateLimit', string>
>;

/** What the form asks the manager to write. */
export interface KeyFormInput {
  name: string;
  mode: KeyMode;
  permissions: string[];
  allowedIps: string[];
  expiresAt: string | null;
  rateLimit: RateLimitSetting | null;
}

const PERMISSION = /^[A-Za-z0-9_.:*/-]{1,128}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

const lines = (text: string) =>
  text
    .split(/[\r\n,]+/)
    .map((line) => line.trim())
    .filter((line) => line !== '');

/** Reads the key form's fields out of a posted body. */
export function readKeyForm(form: URLSearchParams, catalogue: boolean): KeyFormValues {
  const permissionsText = form.get('permissionsText') ?? '';
  return {
    name: form.get('name') ?? '',
    mode: form.get('mode') ?? '',
    permissions: catalogue ? form.getAll('permissions') : lines(permissionsText),
    permissionsText,
    allowedIps: form.get('allowedIps') ?? '',
    allowAny: form.get('allowAny') === 'on',
    expires: (form.get('expires') ?? '').trim(),
    rateLimit: (form.get('rateLimit') ?? '').trim(),
    rateLimitWindow: form.get('rateLimitWindow') ?? 'minute',
  };
}

function nameError(name: string): string | undefined {
  if (name.trim() === '') return 'Enter a name.';
  if (name.length > 200) return 'The name is longer than 200 characters.';
  if (CONTROL.test(name)) return 'The name contains control characters.';
  return undefined;
}

/** Every allow-list line parsed; the first bad one named with its line number. */
function allowList(text: string): { entries: string[]; error?: string } {
  const entries: string[] = [];
  const all = text.split(/\r?\n/);
  for (let i = 0; i < all.length; i++) {
    for (const entry of lines(all[i] ?? '')) {
      try {
        entries.push(parseAllowListEntry(entry).canonical);
      } catch (err) {
        return { entries, error: `Line ${i + 1}: ${(err as Error).message}.` };
      }
    }
  }
  return { entries: [...new Set(entries)] };
}

function expiry(text: string, now: number): { at: string | null; error?: string } {
  if (text === '') return { at: null };
  const ms = DAY.test(text) ? Date.parse(`${text}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(ms)) return { at: null, error: `“${text}” is not a date (YYYY-MM-DD).` };
  if (ms <= now) return { at: null, error: 'The expiry date must lie in the future.' };
  return { at: new Date(ms).toISOString() };
}

function rateLimit(values: KeyFormValues): { setting: RateLimitSetting | null; error?: string } {
  if (values.rateLimit === '') return { setting: null };
  const limit = Number(values.rateLimit);
  const windowMs = RATE_LIMIT_WINDOWS.find(([name]) => name === values.rateLimitWindow)?.[1];
  if (!/^\d+$/.test(values.rateLimit) || !Number.isSafeInteger(limit) || limit < 1) {
    return { setting: null, error: `“${values.rateLimit}” is not a whole number of requests of 1 or more.` };
  }
  if (windowMs === undefined) return { setting: null, error: 'Choose the window: second, minute, hour or day.' };
  return { setting: { limit, windowMs } };
}

/**
 * Checks the form the way the manager will, so that every bad field gets its own message next to
 * it (the manager stops at the first). `currentAllowedIps`: the key's list, for the rule that
 * clearing a non-empty list needs "Allow any address" ticked.
 */
export function validateKeyForm(
  values: KeyFormValues,
  options: { now: number; creating: boolean; currentAllowedIps?: readonly string[] },
): { errors: FieldErrors; input: KeyFormInput } {
  const errors: FieldErrors = {};
  const nameProblem = nameError(values.name);
  if (nameProblem) errors.name = nameProblem;
  if (options.creating && values.mode !== 'test' && values.mode !== 'live') errors.mode = 'Choose test or live.';
  const badPermission = values.permissions.find((p) => !PERMISSION.test(p));
  if (badPermission !== undefined) {
    errors.permissions = `“${badPermission}” is not a permission name (letters, digits and _ . : * / -).`;
  }
  const ips = allowList(values.allowedIps);
  if (ips.error) errors.allowedIps = ips.error;
  else if (ips.entries.length === 0 && (options.currentAllowedIps?.length ?? 0) > 0 && !values.allowAny) {
    errors.allowedIps = 'The list is empty: tick “Allow any address” to let this key be used from any address.';
  }
  const expires = expiry(values.expires, options.now);
  if (expires.error) errors.expires = expires.error;
  const limit = rateLimit(values);
  if (limit.error) errors.rateLimit = limit.error;
  return {
    errors,
    input: {
      name: values.name.trim(),
      mode: values.mode === 'live' ? 'live' : 'test',
      permissions: [...new Set(values.permissions)],
      allowedIps: ips.entries,
      expiresAt: expires.at,
      rateLimit: limit.setting,
    },
  };
}

/** The form values that show a key as it is (the key page's settings form). */
export function valuesOfKey(key: {
  name: string;
  mode: string;
  permissions: readonly string[];
  allowedIps: readonly string[];
  expiresAt: string | null;
  rateLimit?: RateLimitSetting | null;
}): KeyFormValues {
  const window = RATE_LIMIT_WINDOWS.find(([, ms]) => ms === key.rateLimit?.windowMs);
  return {
    name: key.name,
    mode: key.mode,
    permissions: [...key.permissions],
    permissionsText: key.permissions.join('\n'),
    allowedIps: key.allowedIps.join('\n'),
    allowAny: false,
    expires: key.expiresAt ? key.expiresAt.slice(0, 10) : '',
    rateLimit: key.rateLimit ? String(key.rateLimit.limit) : '',
    rateLimitWindow: window?.[0] ?? 'minute',
  };
}
