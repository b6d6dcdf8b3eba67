// What an account is told about a failed attempt: a class, never the low-level error. The address a
// name resolved to, a port, an errno's text or a response body would make the delivery log a scanner
// of the sender's network; the operator gets the error itself through the dispatcher's
// `onAttemptFailed` hook, which no account sees.

/**
 * Why an attempt failed, as the delivery log (`WebhookDelivery.lastError`) shows it to the account:
 *
 * - `timeout`: no answer within the dispatcher's `timeoutMs` (resolving, connecting and the response's head);
 * - `connection_failed`: the name did not resolve, or the connection was refused, reset or unreachable;
 * - `tls_error`: the TLS handshake failed (a certificate not trusted, expired or for another name);
 * - `refused_target`: the host is, or resolved to, an internal address (loopback, private,
 *   link-local, metadata...), so no connection was made;
 * - `http_3xx`, `http_4xx`, `http_5xx`: the receiver answered with that class of status (redirects
 *   are not followed), `lastStatusCode` holding the status.
 *
 * @example
 * const failure: DeliveryFailure = 'refused_target';
 */
export type DeliveryFailure =
  | 'timeout'
  | 'connection_failed'
  | 'tls_error'
  | 'refused_target'
  | 'http_3xx'
  | 'http_4xx'
  | 'http_5xx';

const REFUSED_TARGET = 'ERR_KEYGATE_REFUSED_TARGET';

/**
 * Thrown inside a send when the target is internal: no connection is made. Known by its `code` (the
 * Node send is a module of its own, with its own copy of this class).
 */
export class RefusedTargetError extends Error {
  readonly code = REFUSED_TARGET;
  constructor(host: string, why: string) {
    super(`webhook target ${host} is ${why}`);
    this.name = 'RefusedTargetError';
  }
}

// Error codes of a failed TLS handshake, from Node's TLS layer and OpenSSL.
const TLS_CODE = /CERT|TLS|SSL|SIGNATURE|^EPROTO$/;

/**
 * The class of a status that is not 2xx.
 *
 * @example
 * failureOfStatus(503) // 'http_5xx'
 */
export function failureOfStatus(status: number): DeliveryFailure {
  if (status >= 500) return 'http_5xx';
  if (status >= 400) return 'http_4xx';
  return 'http_3xx';
}

/**
 * The class of an error a send threw (its `cause` chain read for a `code`).
 *
 * @example
 * failureOfError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:80'), { code: 'ECONNREFUSED' })) // 'connection_failed'
 */
export function failureOfError(err: unknown): DeliveryFailure {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === REFUSED_TARGET) return 'refused_target';
    if (typeof code === 'string' && TLS_CODE.test(code)) return 'tls_error';
  }
  return 'connection_failed';
}
