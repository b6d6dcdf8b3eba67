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

// The two symbols are module-level constants of @hono/node-server: learnt from the first light Request
// (both from the same object), then read directly. A Request that lacks the learnt incoming symbol as
// an own property (a plain Request, or one from another copy of the server) is scanned as before.
let incomingKey: symbol | undefined;
let builtKey: symbol | undefined;
let probed = false;

type Incoming = { headers?: unknown; rawHeaders?: unknown } | undefined;

/**
 * The headers of the Request Hono handles, read without copying them on @hono/node-server.
 *
 * @example
 * authenticateEager({ headers: headersOf(c.req.raw), ip }, store, auth);
 */
export function headersOf(raw: Request): HeaderSource {
  if (incomingKey !== undefined && builtKey !== undefined && Object.hasOwn(raw, incomingKey)) {
    if (Object.hasOwn(raw, builtKey)) return raw.headers;
    return incomingHeaders(raw, (raw as unknown as Record<symbol, Incoming>)[incomingKey]);
  }
  return scanned(raw);
}

function incomingHeaders(raw: Request, incoming: Incoming): HeaderSource {
  const headers = incoming?.headers;
  return Array.isArray(incoming?.rawHeaders) && headers && typeof headers === 'object'
    ? (headers as HeaderSource)
    : raw.headers;
}

// The same answer found by looking at every own symbol, learning the two symbols on the way.
function scanned(raw: Request): HeaderSource {
  const symbols = symbolsOf(raw);
  if (symbols.built !== undefined) {
    learn(symbols.incoming, symbols.built);
    return raw.headers;
  }
  if (symbols.incoming === undefined) return raw.headers;
  if (!probed) {
    // Learn the name of built headers once, by building this request's: the same fields it holds.
    probed = true;
    const headers = raw.headers;
    learn(symbols.incoming, symbolsOf(raw).built);
    return headers;
  }
  return incomingHeaders(raw, (raw as unknown as Record<symbol, Incoming>)[symbols.incoming]);
}

function symbolsOf(raw: Request): { incoming: symbol | undefined; built: symbol | undefined } {
  let incoming: symbol | undefined;
  let built: symbol | undefined;
  for (const key of Object.getOwnPropertySymbols(raw)) {
    const name = key.description;
    if (name === BUILT) built = key;
    else if (name === INCOMING) incoming = key;
  }
  return { incoming, built };
}

function learn(incoming: symbol | undefined, built: symbol | undefined): void {
  if (incomingKey === undefined && incoming !== undefined && built !== undefined) {
    incomingKey = incoming;
    builtKey = built;
  }
}
