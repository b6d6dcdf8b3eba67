// Address syntax within the limits of RFC 5321 (lengths) and RFC 5322 (dot-atom and quoted local
// parts), with internationalised domains turned into their ASCII (punycode) form first.
import { domainToASCII } from 'node:url';

/** Longest local part, in octets (RFC 5321 4.5.3.1.1). */
export const MAX_LOCAL = 64;
/** Longest address, in octets: the 256-octet path minus its angle brackets (RFC 5321 4.5.3.1.3, errata 1690). */
export const MAX_ADDRESS = 254;
/** Longest domain label, in octets (RFC 1035). */
export const MAX_LABEL = 63;

// RFC 5322 atext, plus any non-ASCII character (RFC 6531 lets UTF-8 into local parts).
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uFFFF-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uFFFF-]+)*$/u;
// A quoted string: printable ASCII and space, with `"` and `\` only as quoted pairs.
const QUOTED = /^"([\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** @param {string} text */
const octets = (text) => Buffer.byteLength(text, 'utf8');

/**
 * @typedef {{ ok: true, local: string, domain: string, asciiDomain: string, normalized: string, quoted: boolean }} ParsedAddress
 * @typedef {{ ok: false, reason: string }} AddressError
 */

/**
 * Parses an e-mail address. The domain is converted to ASCII (IDN to punycode) and lower-cased;
 * the local part keeps its case, since only the receiving server may fold it.
 *
 * @param {string} input the address as the client sent it; outer white space is ignored
 * @returns {ParsedAddress | AddressError}
 * @example
 * parseAddress('Ada@Bücher.example'); // { ok: true, normalized: 'Ada@xn--bcher-kva.example', ... }
 * parseAddress('a..b@example.com');   // { ok: false, reason: 'the local part is not a dot-atom ...' }
 */
export function parseAddress(input) {
  const text = input.trim();
  const at = text.lastIndexOf('@');
  if (at < 0) return fail('the address has no @');
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  if (local === '') return fail('the local part (before @) is empty');
  if (octets(local) > MAX_LOCAL) return fail(`the local part is longer than ${MAX_LOCAL} octets`);
  const quoted = local.startsWith('"');
  if (quoted ? !QUOTED.test(local) : !DOT_ATOM.test(local)) {
    return fail(
      quoted
        ? 'the quoted local part has a character that must be escaped'
        : "the local part is not a dot-atom (letters, digits, !#$%&'*+/=?^_`{|}~- and single dots between them)",
    );
  }
  const domainError = checkDomain(domain);
  if (domainError) return fail(domainError);
  const asciiDomain = domainToASCII(domain);
  const normalized = `${local}@${asciiDomain}`;
  if (octets(normalized) > MAX_ADDRESS) return fail(`the address is longer than ${MAX_ADDRESS} octets`);
  return { ok: true, local, domain, asciiDomain, normalized, quoted };
}

/**
 * Checks a domain name the way a mail server would need it: convertible to ASCII, at least two
 * labels, each 1 to 63 letters, digits or inner hyphens, a top-level label that is not all digits.
 * Address literals (`[192.0.2.1]`) are refused: no public mailbox is reached that way.
 *
 * @param {string} domain a domain name, Unicode or ASCII
 * @returns {string | null} why it is not usable, or null when it is
 * @example
 * checkDomain('bücher.example'); // null
 * checkDomain('-bad-.example');  // 'the domain label "-bad-" is not ...'
 */
export function checkDomain(domain) {
  if (domain === '') return 'the domain (after @) is empty';
  if (domain.startsWith('[')) return 'address literals such as [192.0.2.1] are not accepted';
  const ascii = domainToASCII(domain);
  if (ascii === '') return 'the domain is not a valid (internationalised) domain name';
  if (ascii.length > 253) return 'the domain is longer than 253 octets';
  const labels = ascii.split('.');
  if (labels.length < 2) return 'the domain needs at least two labels, e.g. example.com';
  for (const label of labels) {
    if (label.length > MAX_LABEL) return `a domain label is longer than ${MAX_LABEL} octets`;
    if (!LABEL.test(label)) return `the domain label "${label}" is not letters, digits and inner hyphens`;
  }
  if (/^[0-9]+$/.test(labels.at(-1) ?? '')) return 'the top-level domain is all digits';
  return null;
}

/**
 * @param {string} reason
 * @returns {AddressError}
 */
function fail(reason) {
  return { ok: false, reason };
}
