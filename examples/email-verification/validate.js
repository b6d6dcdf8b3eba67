// Request bodies, checked before anything is held: an invalid one costs nothing. Every refusal names
// the field at fault.
import { checkDomain, parseAddress } from './address.js';
import { addressPart, candidates } from './contacts.js';
import { InvalidRequest } from './problem.js';

/** Most addresses one batch request may carry. */
export const MAX_BATCH = 100;
/** Longest name accepted by contacts/find, in characters. */
export const MAX_NAME = 100;

/**
 * @param {unknown} body the parsed JSON body (undefined when the request had none)
 * @returns {Record<string, unknown>}
 */
function object(body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequest('body', 'The body must be a JSON object, sent with Content-Type: application/json.');
  }
  return /** @type {Record<string, unknown>} */ (body);
}

/**
 * @param {unknown} value
 * @param {string} field
 * @returns {string}
 */
function text(value, field) {
  if (value === undefined) throw new InvalidRequest(field, `${field} is required.`);
  if (typeof value !== 'string') throw new InvalidRequest(field, `${field} must be a string.`);
  if (value.trim() === '') throw new InvalidRequest(field, `${field} must not be empty.`);
  return value;
}

/**
 * `{ email }` of verify and score. A string that is not a valid address is not bad input: it is the
 * thing being checked, and it gets an `invalid_syntax` result.
 *
 * @param {unknown} body
 * @returns {{ email: string }}
 * @example
 * parseEmailBody({ email: 'ada@example.com' }); // { email: 'ada@example.com' }
 * parseEmailBody({ email: 42 });                // throws InvalidRequest, field 'email'
 */
export function parseEmailBody(body) {
  return { email: text(object(body).email, 'email') };
}

/**
 * Rate-limit units a batch body costs: its number of addresses, or 1 for a body the route will
 * refuse as invalid (it is read, but checks nothing).
 *
 * @param {unknown} body the parsed JSON body
 * @returns {number}
 * @example
 * batchCost({ emails: ['a@example.com', 'b@example.com'] }); // 2
 * batchCost({ emails: 'a@example.com' });                    // 1
 */
export function batchCost(body) {
  const emails = /** @type {{ emails?: unknown } | null | undefined} */ (body)?.emails;
  return Array.isArray(emails) && emails.length > 0 && emails.length <= MAX_BATCH ? emails.length : 1;
}

/**
 * Items counted by a route whose body holds one: 1 once `parse` accepts the body (it throws
 * InvalidRequest otherwise).
 *
 * @param {(body: unknown) => unknown} parse
 * @returns {(body: unknown) => number}
 * @example
 * one(parseEmailBody)({ email: 'ada@example.com' }); // 1
 */
export function one(parse) {
  return (body) => {
    parse(body);
    return 1;
  };
}

/**
 * Credits a request costs: its items times the operation's price, or 0 for a body that does not
 * validate. Such a request is answered 400, and a response below 500 settles what was held, so it
 * must hold nothing. Any other error than InvalidRequest is thrown (keygate answers 500, nothing held).
 *
 * @param {unknown} body the parsed JSON body
 * @param {(body: unknown) => number} itemsOf the items a valid body carries; throws InvalidRequest for an invalid one
 * @param {number} price credits per item
 * @returns {number}
 * @example
 * costOf({ emails: ['a@example.com', 'b@example.com'] }, (b) => parseBatchBody(b).emails.length, 1); // 2
 * costOf({ emails: [] }, (b) => parseBatchBody(b).emails.length, 1);                                 // 0
 */
export function costOf(body, itemsOf, price) {
  try {
    return itemsOf(body) * price;
  } catch (err) {
    if (err instanceof InvalidRequest) return 0;
    throw err;
  }
}

/**
 * `{ emails: [...] }` of verify/batch: 1 to {@link MAX_BATCH} non-empty strings.
 *
 * @param {unknown} body
 * @returns {{ emails: string[] }}
 * @example
 * parseBatchBody({ emails: ['a@example.com', 7] }); // throws InvalidRequest, field 'emails[1]'
 */
export function parseBatchBody(body) {
  const emails = object(body).emails;
  if (emails === undefined) throw new InvalidRequest('emails', 'emails is required.');
  if (!Array.isArray(emails)) throw new InvalidRequest('emails', 'emails must be an array of strings.');
  if (emails.length === 0) throw new InvalidRequest('emails', 'emails must hold at least one address.');
  if (emails.length > MAX_BATCH) {
    throw new InvalidRequest('emails', `emails holds ${emails.length} addresses; a batch takes at most ${MAX_BATCH}.`);
  }
  return { emails: emails.map((email, i) => text(email, `emails[${i}]`)) };
}

/**
 * `{ domain, firstName, lastName }` of contacts/find. The domain must be a usable domain name with
 * room for at least the shortest candidate address (254 octets in all), and each name must keep at
 * least one letter or digit once accents and punctuation are dropped.
 *
 * @param {unknown} body
 * @returns {{ domain: string, asciiDomain: string, firstName: string, lastName: string, first: string, last: string }}
 * @example
 * parseFindBody({ domain: 'Bücher.example', firstName: 'Ada', lastName: 'Lovelace' }); // { asciiDomain: 'xn--bcher-kva.example', first: 'ada', ... }
 */
export function parseFindBody(body) {
  const fields = object(body);
  const domain = text(fields.domain, 'domain').trim();
  const domainError = checkDomain(domain);
  if (domainError) throw new InvalidRequest('domain', `domain is not usable: ${domainError}.`);
  const [firstName, lastName] = /** @type {const} */ (['firstName', 'lastName']).map((field) => {
    const name = text(fields[field], field);
    if (name.length > MAX_NAME) throw new InvalidRequest(field, `${field} is longer than ${MAX_NAME} characters.`);
    if (addressPart(name) === '') {
      throw new InvalidRequest(field, `${field} has no letter or digit that can appear in an address.`);
    }
    return name;
  });
  const first = addressPart(/** @type {string} */ (firstName));
  const last = addressPart(/** @type {string} */ (lastName));
  return {
    domain,
    asciiDomain: roomyDomain(domain, first, last),
    firstName: /** @type {string} */ (firstName),
    lastName: /** @type {string} */ (lastName),
    first,
    last,
  };
}

/**
 * The domain in ASCII, if the shortest candidate address fits under it; refused otherwise, since no
 * search result could be an address (a domain of 253 octets leaves no room for `x@`).
 *
 * @param {string} domain a domain that passed {@link checkDomain}
 * @param {string} first
 * @param {string} last
 * @returns {string}
 */
function roomyDomain(domain, first, last) {
  const [shortest = ''] = candidates(first, last)
    .map(({ local }) => local)
    .sort((a, b) => a.length - b.length);
  const parsed = parseAddress(`${shortest}@${domain}`);
  if (!parsed.ok) {
    throw new InvalidRequest('domain', `domain leaves no room for an address: ${parsed.reason}.`);
  }
  return parsed.asciiDomain;
}
