// The shipped lists, read once at start-up. Each file says where its entries come from.
import { readFileSync } from 'node:fs';

/**
 * Reads a list file: one lower-case entry per line, `#` starts a comment, blank lines are skipped.
 *
 * @param {string | URL} file
 * @returns {Set<string>}
 * @example
 * const roles = readList(new URL('./role-accounts.txt', import.meta.url));
 */
export function readList(file) {
  const entries = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim().toLowerCase())
    .filter(Boolean);
  return new Set(entries);
}

/** Disposable (throw-away) mail domains; a subdomain of one counts as disposable too. */
export const DISPOSABLE_DOMAINS = readList(new URL('./disposable-domains.txt', import.meta.url));
/** Local parts that reach a function or a team rather than a person (RFC 2142 and common additions). */
export const ROLE_ACCOUNTS = readList(new URL('./role-accounts.txt', import.meta.url));

/**
 * Whether `asciiDomain` or one of its parent domains is on the disposable list.
 *
 * @param {string} asciiDomain lower-case ASCII domain
 * @param {Set<string>} [list] default: the shipped list
 * @example
 * isDisposable('eu.mailinator.com'); // true
 */
export function isDisposable(asciiDomain, list = DISPOSABLE_DOMAINS) {
  const labels = asciiDomain.split('.');
  for (let i = 0; i < labels.length - 1; i++) if (list.has(labels.slice(i).join('.'))) return true;
  return false;
}

/**
 * Whether a local part is a role account (`info`, `support`, ...), ignoring case and a `+tag`.
 *
 * @param {string} local
 * @param {Set<string>} [list] default: the shipped list
 * @example
 * isRoleAccount('Support+eu'); // true
 */
export function isRoleAccount(local, list = ROLE_ACCOUNTS) {
  return list.has(local.toLowerCase().replace(/\+.*$/, ''));
}
