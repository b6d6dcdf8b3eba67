import { type InputIssue, type InputIssueReason, KeyManager, type KeyMode, type KeyRateLimit } from 'keygate';
import { quote } from 'keygate/store-kit';

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

type FormField = keyof FieldErrors;

/** The form field an issue of the manager belongs on: `rateLimit.limit` on "Rate limit", `expiresAt` on "Expires". */
function formFieldOf(issue: InputIssue): FormField {
  const field = issue.field.split('.')[0] as string;
  if (field === 'expiresAt') return 'expires';
  return field === 'mode' || field === 'permissions' || field === 'allowedIps' || field === 'rateLimit'
    ? field
    : 'name';
}

const sentence = (text: string) => (text.endsWith('.') ? text : `${text}.`);

// What the form says for a name refused for `reason`, where it has words of its own.
const NAME_PROBLEMS: Partial<Record<InputIssueReason, string>> = {
  wrong_type: 'Enter a name.',
  empty: 'Enter a name.',
  bad_character:
    'The name contains an invisible control, direction-changing or line-break character; type it again without it.',
  no_visible_character: 'The name needs at least one visible character.',
};

/**
 * The manager's issues as one message per form field, every bad entry of a list named: permissions
 * by their position, allow-list entries by the line they were typed on (`lineOf[index]`, from 0).
 */
export function formErrorsOf(issues: readonly InputIssue[], lineOf: readonly number[] = []): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) {
    const field = formFieldOf(issue);
    const text = problemText(field, issue, lineOf);
    errors[field] = errors[field] ? `${errors[field]} ${text}` : text;
  }
  return errors;
}

function problemText(field: FormField, issue: InputIssue, lineOf: readonly number[]): string {
  const { reason, index, message } = issue;
  if (field === 'name') return NAME_PROBLEMS[reason] ?? sentence(message);
  if (field === 'mode') return 'Choose test or live.';
  if (field === 'expires' && reason === 'out_of_range') return 'The expiry date must lie in the future.';
  if (field === 'permissions' && reason === 'too_many') {
    return `Choose at most ${KeyManager.MAX_PERMISSIONS} permissions; a wildcard such as “email:*” covers many.`;
  }
  if (field === 'allowedIps' && index !== undefined) {
    const line = lineOf[index];
    return line === undefined ? sentence(message) : `Line ${line + 1}: ${message}.`;
  }
  return sentence(message);
}

/**
 * Permissions whose refusal the page must not repeat as typed: shaped like an API key, or cut short
 * or redacted when quoted. They are dropped from the input the form shows again.
 */
function withheldPermissions(issues: readonly InputIssue[], permissions: readonly string[]): Set<string> {
  const withheld = new Set<string>();
  for (const { field, index, reason } of issues) {
    if (field !== 'permissions' || index === undefined) continue;
    const p = permissions[index];
    if (typeof p === 'string' && (reason === 'key_shaped' || quote(p) !== JSON.stringify(p))) withheld.add(p);
  }
  return withheld;
}

// The form's words for a permission entry: the value itself when it may be shown, else its position.
function permissionProblems(issues: readonly InputIssue[], permissions: readonly string[], withheld: Set<string>) {
  return issues.map((issue) => {
    const p = issue.index === undefined ? undefined : permissions[issue.index];
    if (issue.field !== 'permissions' || p === undefined) return issue;
    const message = withheld.has(p)
      ? `Entry ${(issue.index as number) + 1} ${issue.reason === 'key_shaped' ? 'looks like an API key, not a permission name' : 'is not a permission name'}; it is not shown again`
      : `“${p}” is not a permission name (letters, digits and _ . : * / -)`;
    return { ...issue, message };
  });
}

/** The allow-list text as entries (one or more per line, by comma), with the line each came from. */
function allowListEntries(text: string): { entries: string[]; lineOf: number[] } {
  const entries: string[] = [];
  const lineOf: number[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    for (const entry of lines(line)) {
      entries.push(entry);
      lineOf.push(i);
    }
  });
  return { entries, lineOf };
}

// What the date field holds as typed: an ISO instant for the manager, or the form's own refusal.
function expiry(text: string): { at: string | null; error?: string } {
  if (text === '') return { at: null };
  const ms = DAY.test(text) ? Date.parse(`${text}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(ms)) return { at: null, error: `“${text}” is not a date (YYYY-MM-DD).` };
  return { at: new Date(ms).toISOString() };
}

// What the rate-limit fields hold as typed: a setting for the manager, or the form's own refusal.
function rateLimit(values: KeyFormValues): { setting: RateLimitSetting | null; error?: string } {
  if (values.rateLimit === '') return { setting: null };
  if (!WHOLE.test(values.rateLimit)) return { setting: null, error: notANumber(values.rateLimit) };
  const windowMs = RATE_LIMIT_WINDOWS.find(([name]) => name === values.rateLimitWindow)?.[1];
  if (windowMs === undefined) return { setting: null, error: 'Choose the window: second, minute, hour or day.' };
  return { setting: { limit: Number(values.rateLimit), windowMs } };
}

const notANumber = (typed: string) => `“${typed}” is not a whole number of requests of 1 or more.`;

/**
 * Checks the form with the manager's own rules (`KeyManager.check`), so that every bad field gets
 * its own message next to it, and every bad allow-list line is named by its number. What the
 * fields hold as typed (a date, a whole number) the form reads first. `currentAllowedIps`: the key's
 * list, for the rule that clearing a non-empty list needs "Allow any address" ticked. A permission
 * shaped like an API key is also taken out of `values` (the input shown again), so the page never
 * repeats it.
 */
export function validateKeyForm(
  values: KeyFormValues,
  options: { now: number; creating: boolean; currentAllowedIps?: readonly string[] },
): { errors: FieldErrors; input: KeyFormInput } {
  const typedExpiry = expiry(values.expires);
  const typedLimit = rateLimit(values);
  const ips = allowListEntries(values.allowedIps);
  const checked = KeyManager.check(
    {
      name: values.name,
      ...(options.creating ? { mode: values.mode } : {}),
      permissions: values.permissions,
      allowedIps: ips.entries,
      expiresAt: typedExpiry.at,
      rateLimit: typedLimit.error ? undefined : typedLimit.setting,
    },
    { now: options.now, partial: true },
  );
  const issues = checked.ok ? [] : checked.issues;
  const withheld = withheldPermissions(issues, values.permissions);
  const errors = formErrorsOf(permissionProblems(issues, values.permissions, withheld), ips.lineOf);
  if (withheld.size > 0) withhold(values, withheld);
  if (typedExpiry.error) errors.expires = typedExpiry.error;
  if (typedLimit.error) errors.rateLimit = typedLimit.error;
  if (issues.some((i) => i.field === 'rateLimit.limit')) errors.rateLimit = notANumber(values.rateLimit);
  const clearing = ips.entries.length === 0 && (options.currentAllowedIps?.length ?? 0) > 0;
  if (clearing && !values.allowAny) {
    errors.allowedIps = 'The list is empty: tick “Allow any address” to let this key be used from any address.';
  }
  const value = checked.ok ? checked.value : {};
  return {
    errors,
    input: {
      name: value.name ?? values.name.trim(),
      mode: values.mode === 'live' ? 'live' : 'test',
      permissions: value.permissions ?? [...new Set(values.permissions)],
      allowedIps: value.allowedIps ?? [],
      expiresAt: value.expiresAt ?? null,
      rateLimit: (value.rateLimit as RateLimitSetting | null | undefined) ?? null,
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
  rateLimit?: KeyRateLimit | null;
}): KeyFormValues {
  // Named limits are listed by the page, not edited in the form: the form shows none.
  const one = Array.isArray(key.rateLimit) ? null : (key.rateLimit as RateLimitSetting | null | undefined);
  const window = RATE_LIMIT_WINDOWS.find(([, ms]) => ms === one?.windowMs);
  return {
    name: key.name,
    mode: key.mode,
    permissions: [...key.permissions],
    permissionsText: key.permissions.join('\n'),
    allowedIps: key.allowedIps.join('\n'),
    allowAny: false,
    expires: key.expiresAt ? key.expiresAt.slice(0, 10) : '',
    rateLimit: one ? String(one.limit) : '',
    rateLimitWindow: window?.[0] ?? 'minute',
  };
}
