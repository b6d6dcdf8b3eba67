// DATABASE_URL: what to say when PostgreSQL cannot be used with it. A start that fails there says so in
// one line, naming the variable and the fix, instead of the driver's stack.
import { SettingError } from './settings.js';

/**
 * `url` as it may be printed: the password, if any, replaced by `***`.
 *
 * @param {string} url a DATABASE_URL value
 * @example
 * shownDatabaseUrl('postgres://app:s3cret@db/keys'); // 'postgres://app:***@db/keys'
 */
export function shownDatabaseUrl(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return '(not a URL)';
  }
}

/**
 * `DATABASE_URL`: a `postgres://` or `postgresql://` URL.
 *
 * @param {string | undefined} value
 * @returns {string | undefined} the URL, or undefined when the variable is not set (or empty)
 * @throws SettingError (setting `DATABASE_URL`) for anything else
 * @example
 * databaseUrlOf('postgres://app@127.0.0.1:5432/keys'); // 'postgres://app@127.0.0.1:5432/keys'
 */
export function databaseUrlOf(value) {
  if (value === undefined || value === '') return undefined;
  let parsed;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== 'postgres:' && parsed?.protocol !== 'postgresql:') {
    throw new SettingError(
      'DATABASE_URL',
      'DATABASE_URL must be a PostgreSQL URL such as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or unset for PGlite in ./.keygate.',
    );
  }
  return value;
}

/**
 * The one-line error for a start whose stores could not open on `url`: the URL (password hidden), the
 * reason (the system's when no server answered, else PostgreSQL's), and the fix. A URL without a user
 * that reached the server gets that fix: the driver then falls back to PGUSER or the system user
 * name, which is rarely a role PostgreSQL has.
 *
 * @param {string} url the DATABASE_URL value
 * @param {unknown} err what opening or migrating the stores threw
 * @returns {SettingError} setting `DATABASE_URL`, with `cause` err
 * @example
 * throw databaseProblem('postgres://127.0.0.1/keys', err);
 * // DATABASE_URL=postgres://127.0.0.1/keys names no user (PostgreSQL: role "ada" does not exist): put one in it, ...
 */
export function databaseProblem(url, err) {
  const { reason, unreachable } = reasonOf(err);
  const parsed = new URL(url);
  let message;
  if (unreachable) {
    message =
      `DATABASE_URL=${shownDatabaseUrl(url)} could not be reached (${reason}): start PostgreSQL there, or fix ` +
      'the host and port in it, or unset it to keep keys in PGlite (./.keygate).';
  } else if (parsed.username === '') {
    parsed.username = 'postgres';
    message =
      `DATABASE_URL=${shownDatabaseUrl(url)} names no user (${reason}): put one in it, ` +
      `e.g. DATABASE_URL=${shownDatabaseUrl(parsed.href)}`;
  } else {
    message =
      `DATABASE_URL=${shownDatabaseUrl(url)} did not work (${reason}): check its host, port, user, ` +
      'password and database, or unset it to keep keys in PGlite (./.keygate).';
  }
  const problem = new SettingError('DATABASE_URL', message);
  problem.cause = err;
  return problem;
}

/**
 * The innermost message, the driver's own words rather than the store's wrapper (a refused connection
 * is an AggregateError of one error per address tried: the first says it), and whether the server
 * was never reached: a system error (`ECONNREFUSED`, `ENOTFOUND`, ...) rather than PostgreSQL's answer.
 *
 * @param {unknown} err
 * @returns {{ reason: string, unreachable: boolean }}
 */
function reasonOf(err) {
  /** @type {any} */
  let inner = err;
  while (inner?.cause instanceof Error || inner?.errors?.[0] instanceof Error) inner = inner.cause ?? inner.errors[0];
  const message = String(inner?.message || inner?.code || err).split('\n')[0] ?? '';
  const unreachable = typeof inner?.syscall === 'string' || /^E[A-Z]+$/.test(String(inner?.code));
  return { reason: unreachable ? message : `PostgreSQL: ${message}`, unreachable };
}
