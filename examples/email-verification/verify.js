// What live keys get: real checks, offline-capable. Syntax and the shipped lists never leave the
// process; only the MX question goes to DNS, and its failure gives `unknown`, never a guess.
import { parseAddress } from './address.js';
import { isDisposable, isRoleAccount } from './lists/index.js';

/**
 * @typedef {import('./mx.js').MxResult} MxResult
 * @typedef {'deliverable' | 'undeliverable' | 'risky' | 'unknown'} Verdict
 * @typedef {object} Checks
 * @property {'valid' | 'invalid'} syntax
 * @property {string} [syntaxError] why the syntax is invalid
 * @property {boolean | null} disposable null when the syntax is invalid
 * @property {boolean | null} role
 * @property {MxResult['status'] | null} mx
 * @property {string[]} mxHosts
 * @typedef {{ email: string, normalized: string | null, result: Verdict, reason: string, checks: Checks }} Verification
 */

/** What each verdict's reason means, for the README and clients. */
export const REASONS = Object.freeze({
  invalid_syntax: 'The address breaks RFC 5321/5322 syntax or length limits.',
  no_mail_server: 'The domain does not exist or has neither MX nor address records.',
  domain_refuses_mail: 'The domain publishes a null MX (RFC 7505): it accepts no mail.',
  dns_unavailable: 'DNS did not answer in time; try again later.',
  disposable: 'The domain is a disposable (throw-away) mail service.',
  role_account: 'The local part is a role (info@, support@, ...), read by a team or nobody.',
  mail_server_found: 'The domain accepts mail (MX or implicit MX). Mailboxes are not probed.',
});

/**
 * Checks one address for a live key: syntax (IDN domains to punycode), the disposable and role
 * lists, then the domain's mail servers through `lookupMx`.
 *
 * @param {string} email
 * @param {(asciiDomain: string) => Promise<MxResult>} lookupMx
 * @returns {Promise<Verification>}
 * @example
 * const item = await verifyAddress('ada@example.com', createMxLookup());
 * item.result; // 'deliverable' | 'undeliverable' | 'risky' | 'unknown'
 */
export async function verifyAddress(email, lookupMx) {
  const parsed = parseAddress(email);
  if (!parsed.ok) return invalid(email, parsed.reason);
  const mx = await lookupMx(parsed.asciiDomain);
  return judge(email, parsed, mx);
}

/**
 * The verdict for a syntactically valid address, given its MX answer. Shared with the sandbox.
 *
 * @param {string} email
 * @param {{ local: string, asciiDomain: string, normalized: string }} parsed
 * @param {MxResult} mx
 * @returns {Verification}
 */
export function judge(email, parsed, mx) {
  const checks = {
    syntax: /** @type {const} */ ('valid'),
    disposable: isDisposable(parsed.asciiDomain),
    role: isRoleAccount(parsed.local),
    mx: mx.status,
    mxHosts: mx.hosts,
  };
  const [result, reason] = verdictOf(checks);
  return { email, normalized: parsed.normalized, result, reason, checks };
}

/**
 * @param {string} email
 * @param {string} why
 * @returns {Verification}
 */
export function invalid(email, why) {
  return {
    email,
    normalized: null,
    result: 'undeliverable',
    reason: 'invalid_syntax',
    checks: { syntax: 'invalid', syntaxError: why, disposable: null, role: null, mx: null, mxHosts: [] },
  };
}

/**
 * @param {Checks} checks
 * @returns {[Verdict, keyof typeof REASONS]}
 */
function verdictOf(checks) {
  if (checks.mx === 'none') return ['undeliverable', 'no_mail_server'];
  if (checks.mx === 'null') return ['undeliverable', 'domain_refuses_mail'];
  if (checks.mx === 'unknown') return ['unknown', 'dns_unavailable'];
  if (checks.disposable) return ['risky', 'disposable'];
  if (checks.role) return ['risky', 'role_account'];
  return ['deliverable', 'mail_server_found'];
}

/** Points each finding takes off a perfect 100. */
export const SCORE_FACTORS = Object.freeze({
  no_mail_server: 100,
  domain_refuses_mail: 100,
  disposable: 60,
  dns_unavailable: 40,
  role_account: 30,
  implicit_mx: 10,
  generated_looking: 10,
  quoted_local_part: 10,
});

/**
 * Scores an address's quality from 0 (mail will not arrive) to 100 (a personal address at a domain
 * with mail servers), listing the factors that took points off.
 *
 * @param {Verification} item
 * @returns {{ score: number, factors: Array<{ factor: keyof typeof SCORE_FACTORS | 'invalid_syntax', impact: number }> }}
 * @example
 * scoreOf(await verifyAddress('info@example.com', lookupMx)); // { score: 70, factors: [{ factor: 'role_account', impact: -30 }] }
 */
export function scoreOf(item) {
  if (item.checks.syntax === 'invalid') return { score: 0, factors: [{ factor: 'invalid_syntax', impact: -100 }] };
  /** @type {Array<keyof typeof SCORE_FACTORS>} */
  const found = [];
  const { checks } = item;
  if (checks.mx === 'none') found.push('no_mail_server');
  if (checks.mx === 'null') found.push('domain_refuses_mail');
  if (checks.mx === 'unknown') found.push('dns_unavailable');
  if (checks.mx === 'implicit') found.push('implicit_mx');
  if (checks.disposable) found.push('disposable');
  if (checks.role) found.push('role_account');
  const local = (item.normalized ?? '').slice(0, (item.normalized ?? '').lastIndexOf('@'));
  if (local.startsWith('"')) found.push('quoted_local_part');
  else if ((local.match(/[0-9]/g) ?? []).length >= 4) found.push('generated_looking');
  const factors = found.map((factor) => ({ factor, impact: -SCORE_FACTORS[factor] }));
  const score = Math.max(
    0,
    factors.reduce((sum, f) => sum + f.impact, 100),
  );
  return { score, factors };
}
