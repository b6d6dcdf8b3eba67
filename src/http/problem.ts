import { type AuthFailure, DENIALS, type DenialCode, InvalidInputError } from 'keygate';
import { resolveAuthOptions } from '../auth/authenticate.js';

/** An HTTP answer to a refused request, in framework-neutral parts. Every adapter writes these bytes. */
export interface DenialResponse {
  /** The HTTP status: 401, 403, 429 or 503. */
  readonly status: number;
  /** Lower-case header names and their values, ready for any framework's writer. */
  readonly headers: Readonly<Record<string, string>>;
  /** RFC 9457 problem details: `{ type, title, status, detail, code }` as JSON text. */
  readonly body: string;
}

/**
 * Answers one failure with its {@link DenialResponse}; made by {@link createDenialResponder}.
 *
 * @example
 * const respond: DenialResponder = createDenialResponder();
 */
export type DenialResponder = (failure: Pick<AuthFailure, 'code' | 'retryAfter'>) => DenialResponse;

/**
 * Options of {@link createDenialResponder}.
 *
 * @example
 * const options: DenialResponderOptions = { header: 'x-api-key', retryAfterMs: 10_000 };
 */
export interface DenialResponderOptions {
  /** Header the key travels in, named in `WWW-Authenticate`. @default 'x-api-key' */
  header?: string;
  /**
   * Milliseconds a client should wait after a 503, sent as `Retry-After` in whole seconds (rounded
   * up, at least 1). @default 5000
   */
  retryAfterMs?: number;
}

/**
 * Refuses the option's earlier name, `retryAfter` (seconds), with `InvalidInputError` (field
 * `retryAfter`): a JavaScript caller still passing it would otherwise silently get the default.
 * Internal to the kit.
 *
 * @example
 * refuseRenamed(options);
 */
export function refuseRenamed(options: object): void {
  if ('retryAfter' in options && (options as { retryAfter?: unknown }).retryAfter !== undefined) {
    throw new InvalidInputError('retryAfter', 'retryAfter (seconds) is now retryAfterMs (milliseconds)');
  }
}

// `Retry-After` seconds for a wait in milliseconds: whole seconds, rounded up, at least 1.
function retryAfterSeconds(retryAfterMs: number): number {
  if (typeof retryAfterMs !== 'number' || !Number.isFinite(retryAfterMs) || retryAfterMs < 0) {
    throw new InvalidInputError(
      'retryAfterMs',
      `retryAfterMs must be a number of milliseconds >= 0, got ${typeof retryAfterMs === 'number' ? retryAfterMs : typeof retryAfterMs}`,
    );
  }
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}

function build(code: DenialCode, header: string, retryAfter: string): DenialResponse {
  const d = DENIALS[code];
  const headers: Record<string, string> = {
    'content-type': 'application/problem+json',
    'cache-control': 'no-store',
  };
  if (d.status === 401) headers['www-authenticate'] = `ApiKey header="${header}"`;
  if (d.status === 503) headers['retry-after'] = retryAfter;
  const body = JSON.stringify({
    type: `urn:keygate:problem:${code}`,
    title: d.title,
    status: d.status,
    detail: d.detail,
    code,
  });
  return Object.freeze({ status: d.status, headers: Object.freeze(headers), body });
}

/**
 * Builds the function adapters use to answer denials: RFC 9457 problem+json with the code from the
 * check-order table, `WWW-Authenticate` naming the key header on 401, `Retry-After` on 503 and on
 * 429 (the failure's own `retryAfter`, in seconds), and `Cache-Control: no-store`. Responses are
 * built once per code (and per `Retry-After` value for 429) and reused. Bad options throw
 * `InvalidInputError` naming the option.
 *
 * @example
 * const respond = createDenialResponder({ header: 'x-api-key', retryAfterMs: 10_000 });
 * const { status, headers, body } = respond(result); // result: an AuthFailure
 */
export function createDenialResponder(options: DenialResponderOptions = {}): DenialResponder {
  refuseRenamed(options);
  const header = resolveAuthOptions({ header: options.header ?? 'x-api-key' }).header;
  const retryAfter = String(retryAfterSeconds(options.retryAfterMs ?? 5000));
  const built = new Map<DenialCode, DenialResponse>();
  for (const code of Object.keys(DENIALS) as DenialCode[]) built.set(code, build(code, header, retryAfter));
  // 429s differ only in their Retry-After; a few hundred distinct values at most (window / 1 s).
  const throttled = new Map<number, DenialResponse>();
  function tooMany(seconds: number | undefined): DenialResponse {
    const wait = Number.isInteger(seconds) && (seconds as number) > 0 ? (seconds as number) : 1;
    let denial = throttled.get(wait);
    if (denial === undefined) {
      const base = built.get('too_many_failed_attempts') as DenialResponse;
      denial = Object.freeze({ ...base, headers: Object.freeze({ ...base.headers, 'retry-after': String(wait) }) });
      if (throttled.size >= 1000) throttled.clear();
      throttled.set(wait, denial);
    }
    return denial;
  }
  return (failure) =>
    failure.code === 'too_many_failed_attempts'
      ? tooMany(failure.retryAfter)
      : (built.get(failure.code) ?? (built.get('key_store_unavailable') as DenialResponse));
}
