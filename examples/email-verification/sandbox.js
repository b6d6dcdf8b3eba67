// What test keys get: deterministic answers from the same code paths, with DNS replaced by a table.
// Nothing here touches the network or the ledger.
import { parseAddress } from './address.js';
import { invalid, judge } from './verify.js';

/**
 * Magic local parts (any domain) and the mail-server answer each stands for. `disposable` and `risky`
 * are forced onto the disposable and role lists' verdicts; every other valid address is treated as
 * having a mail server, so its verdict comes from the real syntax and list checks alone.
 */
/** @type {Readonly<Record<string, { mx: import('./mx.js').MxResult['status'], role?: boolean, disposable?: boolean, note: string }>>} */
export const MAGIC = Object.freeze({
  deliverable: { mx: 'found', note: 'deliverable: mail_server_found' },
  undeliverable: { mx: 'none', note: 'undeliverable: no_mail_server' },
  risky: { mx: 'found', role: true, note: 'risky: role_account' },
  disposable: { mx: 'found', disposable: true, note: 'risky: disposable' },
  unknown: { mx: 'unknown', note: 'unknown: dns_unavailable' },
});

/** The MX hosts every sandbox domain with mail pretends to have. */
export const SANDBOX_MX = 'mx.sandbox.invalid';

/**
 * The sandbox answer for one address: same shape as a live one, decided by the magic local part.
 *
 * @param {string} email
 * @returns {import('./verify.js').Verification}
 * @example
 * sandboxVerify('undeliverable@example.com').result; // 'undeliverable'
 */
export function sandboxVerify(email) {
  const parsed = parseAddress(email);
  if (!parsed.ok) return invalid(email, parsed.reason);
  const name = parsed.local.toLowerCase().replace(/\+.*$/, '');
  const magic = Object.hasOwn(MAGIC, name) ? MAGIC[name] : undefined; // not `constructor@` from the prototype
  const item = judge(email, parsed, sandboxMx(magic?.mx ?? 'found'));
  if (magic?.disposable) return forced(item, 'disposable', { disposable: true });
  if (magic?.role) return forced(item, 'role_account', { role: true });
  return item;
}

/**
 * The sandbox MX answer: the given status, with a fake host when the domain "has" mail servers.
 *
 * @param {import('./mx.js').MxResult['status']} status
 * @returns {import('./mx.js').MxResult}
 */
export function sandboxMx(status = 'found') {
  return { status, hosts: status === 'found' ? [SANDBOX_MX] : [] };
}

/**
 * @param {import('./verify.js').Verification} item
 * @param {string} reason
 * @param {Partial<import('./verify.js').Checks>} checks
 * @returns {import('./verify.js').Verification}
 */
function forced(item, reason, checks) {
  return { ...item, result: 'risky', reason, checks: { ...item.checks, ...checks } };
}
