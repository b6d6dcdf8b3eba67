import type { HeaderSource } from 'keygate/adapter-kit';

// @hono/node-server gives Hono a light Request whose `headers` getter builds a Fetch `Headers` from
// every raw header the first time anyone reads it: most of what keygate would add to a request. While
// that Request is the one Hono handles (a middleware that replaced it, or `app.request()`, gives a plain
// Request) and its headers were never built (so nobody can have changed them), the Node request it
// wraps holds the very same fields: reading the key there is reading this request, without the copy.
// The light Request keeps both under symbols named `incomingKey` and `headersKey`; anything that does
// not look exactly like that reads `raw.headers`.
const INCOMING = 'incomingKey';
const BUILT = 'headersKey';

/**
 * The headers of the Request Hono handles, read without copying them on @hono/node-server.
 *
 * @example
 * authenticateEager({ headers: headersOf(c.req.raw), ip }, store, auth);
 */
export function headersOf(raw: Request): HeaderSource {
  let incoming: { headers?: unknown; rawHeaders?: unknown } | undefined;
  for (const key of Object.getOwnPropertySymbols(raw)) {
    const name = key.description;
    if (name === BUILT) return raw.headers;
    if (name === INCOMING) incoming = (raw as unknown as Record<symbol, typeof incoming>)[key];
  }
  const headers = incoming?.headers;
  return Array.isArray(incoming?.rawHeaders) && headers && typeof headers === 'object'
    ? (headers as HeaderSource)
    : raw.headers;
}
