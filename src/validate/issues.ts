import { type InputIssue, type InputIssueReason, InvalidInputError } from '#errors';

/**
 * The outcome of a check that does not throw: the value as it would be stored, or every issue found.
 *
 * @example
 * const checked = KeyManager.check(input);
 * if (!checked.ok) for (const issue of checked.issues) console.log(issue.field, issue.index, issue.reason);
 */
export type InputCheck<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly InputIssue[] };

// How many issues an error's message spells out; `issues` always holds them all.
const SPELLED_OUT = 3;

/** What `InvalidInputError.field` says of an issue: its field, with the entry's position for a list entry. */
export function issuePath(issue: InputIssue): string {
  return issue.index === undefined ? issue.field : `${issue.field}[${issue.index}]`;
}

/** One issue, as a value (for validators that collect several before throwing). */
export function issue(field: string, reason: InputIssueReason, message: string, index?: number): InputIssue {
  return index === undefined ? { field, reason, message } : { field, index, reason, message };
}

/**
 * One error for every issue found: `field` is the first issue's path, the message spells out the
 * first three.
 *
 * @example
 * throw refusal([issue('name', 'empty', 'name must be a non-empty string')]);
 */
export function refusal(issues: readonly InputIssue[]): InvalidInputError {
  const first = issues[0] as InputIssue;
  const spelled = issues
    .slice(0, SPELLED_OUT)
    .map((i) => i.message)
    .join('; ');
  const more = issues.length > SPELLED_OUT ? `; and ${issues.length - SPELLED_OUT} more` : '';
  return new InvalidInputError(issuePath(first), spelled + more, { issues });
}

/** Throws one `InvalidInputError` of `field` with one issue. */
export function refuse(field: string, reason: InputIssueReason, message: string): never {
  throw new InvalidInputError(field, message, { reason });
}

/**
 * Runs a validator that throws: its value, or the issues of the `InvalidInputError` it threw (any
 * other error propagates).
 *
 * @example
 * const name = attempt(() => validName(input.name)); // { ok: true, value: 'ci' } or { ok: false, issues }
 */
export function attempt<T>(validate: () => T): InputCheck<T> {
  try {
    return { ok: true, value: validate() };
  } catch (err) {
    if (err instanceof InvalidInputError) return { ok: false, issues: err.issues };
    throw err;
  }
}
