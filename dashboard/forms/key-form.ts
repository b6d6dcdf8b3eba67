import { InvalidInputError, type KeyMode } from 'keygate';
import { quote } from 'keygate/store-kit';
// Bundled from the sources (the dashboard is built as a kit): the manager's own write-time checks,
// run field by field so that every bad field gets its message, and per-entry allow-list checks.
import { parseAllowListEntry } from '../../src/ip/allow-list.js';
import { validExpiry, validMode, validName, validPermissions, validRateLimit } from '../../src/validate/fields.js';

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

// What the date field and the rate-limit field accept as typed; the rules on the values are the manager's.
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const WHOLE = /^\d+$/;

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

/** Runs one of the manager's validators: its value, or the `InvalidInputError` it threw. */
function attempt<T>(check: () => T): { value: T; error?: undefined } | { value?: undefined; error: InvalidInputError } {
  try {
    return { value: check() };
  } catch (err) {
    if (err instanceof InvalidInputError) return { error: err };
    throw err;
  }
}

/** The manager's message for the form: its leading field name (`name`, `expiresAt`) said in words. */
function reworded(err: InvalidInputError, field: string, words: string): string {
  return `${err.message.startsWith(`${field} `) ? `${words}${err.message.slice(field.length)}` : err.message}.`;
}

function nameError(name: string): string | undefined {
  const { error } = attempt(() => validName(name));
  if (!error) return undefined;
  return name.trim() === '' ? 'Enter a name.' : reworded(error, 'name', 'The name');
}

/**
 * The manager's permission check, entry by entry. `message` is about the first refused entry;
 * `withheld` are the refused entries the manager's message would not repeat as typed (shaped like an
 * API key, or cut short): they are dropped from the input the form shows again, so a pasted key is
 * never echoed back.
 */
function permissionProblems(permissions: readonly string[]): { message?: string; withheld: Set<string> } {
  const withheld = new Set<string>();
  let message: string | undefined;
  for (const [i, p] of permissions.entries()) {
    const { error } = attempt(() => validPermissions([p]));
    if (!error) continue;
    const repeated = quote(p) === JSON.stringify(p) && error.message.includes(quote(p));
    if (!repeated) withheld.add(p);
    message ??= repeated
      ? `“${p}” is not a permission name (letters, digits and _ . : * / -).`
      : `${error.message.replace(/^permissions\[0\]/, `Entry ${i + 1}`)}; it is not shown again.`;
  }
  return { message, withheld };
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
  const checked = attempt(() => validExpiry(new Date(ms).toISOString(), now));
  if (checked.error) return { at: null, error: reworded(checked.error, 'expiresAt', 'The expiry date') };
  return { at: checked.value };
}

function rateLimit(values: KeyFormValues): { setting: RateLimitSetting | null; error?: string } {
  if (values.rateLimit === '') return { setting: null };
  const notANumber = `“${values.rateLimit}” is not a whole number of requests of 1 or more.`;
  if (!WHOLE.test(values.rateLimit)) return { setting: null, error: notANumber };
  const windowMs = RATE_LIMIT_WINDOWS.find(([name]) => name === values.rateLimitWindow)?.[1];
  if (windowMs === undefined) return { setting: null, error: 'Choose the window: second, minute, hour or day.' };
  const checked = attempt(() => validRateLimit({ limit: Number(values.rateLimit), windowMs }));
  if (checked.error)
    return {
      setting: null,
      error: checked.error.field === 'rateLimit.limit' ? notANumber : `${checked.error.message}.`,
    };
  return { setting: checked.value };
}

/**
 * Checks the form with the manager's own validators, field by field, so that every bad field gets its
 * own message next to it (the manager stops at the first). `currentAllowedIps`: the key's list, for
 * the rule that clearing a non-empty list needs "Allow any address" ticked. A permission shaped like
 * an API key is also taken out of `values` (the input shown again), so the page never repeats it.
 */
export function validateKeyForm(
  values: KeyFormValues,
  options: { now: number; creating: boolean; currentAllowedIps?: readonly string[] },
): { errors: FieldErrors; input: KeyFormInput } {
  const errors: FieldErrors = {};
  const nameProblem = nameError(values.name);
  if (nameProblem) errors.name = nameProblem;
  if (options.creating && attempt(() => validMode(values.mode)).error) errors.mode = 'Choose test or live.';
  const permissions = permissionProblems(values.permissions);
  if (permissions.message) errors.permissions = permissions.message;
  if (permissions.withheld.size > 0) withhold(values, permissions.withheld);
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

/** Takes `withheld` out of the permissions the form shows again (ticked entries and the text field). */
function withhold(values: KeyFormValues, withheld: ReadonlySet<string>): void {
  values.permissions = values.permissions.filter((p) => !withheld.has(p));
  values.permissionsText = lines(values.permissionsText)
    .filter((p) => !withheld.has(p))
    .join('\n');
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
