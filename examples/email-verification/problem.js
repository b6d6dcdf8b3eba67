// RFC 9457 problem details for the service's own errors, in the same shape keygate uses for denials
// (keygate answers the key's and the credits' own: 401, 402, 403, 429, 503).

const TITLES = Object.freeze({
  invalid_request: 'Invalid request',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  internal_error: 'Internal error',
});

/**
 * Sends `application/problem+json`: `{ type, title, status, detail, code, ...extra }`.
 *
 * @param {import('express').Response} res
 * @param {number} status
 * @param {keyof typeof TITLES} code
 * @param {string} detail
 * @param {Record<string, unknown>} [extra] more members, e.g. `{ field: 'email' }`
 * @example
 * sendProblem(res, 400, 'invalid_request', 'email must be a string.', { field: 'email' });
 */
export function sendProblem(res, status, code, detail, extra = {}) {
  const body = { type: `urn:email-verification:problem:${code}`, title: TITLES[code], status, detail, code, ...extra };
  res.status(status).set('cache-control', 'no-store').type('application/problem+json').send(JSON.stringify(body));
}

/**
 * Bad client input, named by its field. Thrown by the validators, answered 400; such a request costs nothing.
 *
 * @example
 * throw new InvalidRequest('emails[3]', 'emails[3] must be a string.');
 */
export class InvalidRequest extends Error {
  /** @param {string} field @param {string} detail */
  constructor(field, detail) {
    super(detail);
    this.name = 'InvalidRequest';
    this.field = field;
  }
}
