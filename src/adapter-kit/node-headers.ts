import type { AuthenticateOptions } from 'keygate';
import { resolveAuthOptions } from '../auth/authenticate.js';
import type { HeaderSource } from '../vocabulary/result.js';

/**
 * A Node request's headers as Node parsed them, and the lines they came from (`rawHeaders`).
 *
 * @example
 * const lines: NodeHeaderLines = { headers: req.headers, rawHeaders: req.rawHeaders };
 */
export interface NodeHeaderLines {
  /** `IncomingMessage.headers` (or a framework's copy of it). */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** `IncomingMessage.rawHeaders`: names and values, alternating, one pair per line received. */
  readonly rawHeaders?: readonly string[] | undefined;
}

/**
 * For Node adapters: returns `headersOf(message)`, the headers to hand `authenticate`, in which a key
 * field sent on several lines holds every line's value. Node's `req.headers` keeps only the first
 * `Authorization` line (and joins other repeated fields with ", "), so a request with two lines would
 * be judged by the first key alone; here two lines are two values, which `authenticate` refuses as
 * 401 `malformed_api_key`, as the contract says of any request carrying more than one key. Only the
 * fields `from` reads whose repeated lines Node drops are looked for (`Authorization`, or a key
 * header such as `From`); with the default `x-api-key`, whose lines Node joins, `message.headers` is
 * handed on untouched at no cost. Otherwise it is handed on as it is when each came on one line at
 * most, so such a request costs one pass over `rawHeaders` and no copy.
 *
 * @param auth the adapter's core options (`header`, `from`), resolved once here
 * @example
 * const headersOf = createNodeHeaders(auth);
 * const request = { headers: headersOf(req), ip: req.ip, native: req };
 */
export function createNodeHeaders(auth: AuthenticateOptions): (message: NodeHeaderLines) => HeaderSource {
  const { header, from } = resolveAuthOptions(auth);
  const names = from === 'header' ? [header] : from === 'bearer' ? ['authorization'] : [header, 'authorization'];
  // Node joins the lines of any other field with ", ", which authenticate already refuses as two keys.
  const keyFields = [...new Set(names)].filter((name) => KEEPS_FIRST_LINE.has(name));
  if (keyFields.length === 0) return ({ headers }) => headers;
  return function headersOf({ headers, rawHeaders }) {
    if (rawHeaders === undefined) return headers;
    let copy: Record<string, string | readonly string[] | undefined> | undefined;
    for (const name of keyFields) {
      const lines = linesOf(rawHeaders, name);
      if (lines === undefined) continue;
      copy ??= { ...headers };
      copy[name] = lines;
    }
    return copy ?? headers;
  };
}

// The fields whose repeated lines Node drops, keeping the first (`IncomingMessage.headers`).
const KEEPS_FIRST_LINE = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

// The values of field `name` (lower-case) when it came on more than one line; else undefined.
function linesOf(rawHeaders: readonly string[], name: string): string[] | undefined {
  let lines: string[] | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const field = rawHeaders[i] as string;
    if (field.length !== name.length || field.toLowerCase() !== name) continue;
    if (lines === undefined) lines = [];
    lines.push(rawHeaders[i + 1] as string);
  }
  return lines !== undefined && lines.length > 1 ? lines : undefined;
}
