import type { Dashboard } from './dashboard.js';
import { rememberClientAddress } from './node-address.js';

/** The part of Node's `IncomingMessage` the bridge reads (Express and Fastify requests are ones). */
export interface NodeRequestLike extends AsyncIterable<Uint8Array | string> {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
  rawHeaders?: string[];
  socket?: { remoteAddress?: string; encrypted?: boolean } | null;
  readableEnded?: boolean;
  on(event: 'close', listener: () => void): unknown;
}

/** The part of Node's `ServerResponse` the bridge writes. */
export interface NodeResponseLike {
  statusCode: number;
  headersSent?: boolean;
  writableEnded?: boolean;
  setHeader(name: string, value: string | string[]): unknown;
  write(chunk: Uint8Array): boolean;
  end(chunk?: Uint8Array): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  destroy?(error?: Error): unknown;
}

/** What the host framework resolved about a request, by its own (trust-proxy) rules. */
export interface NodeRequestFacts {
  /** Client address. */
  ip?: string;
  /** `'http'` or `'https'`, as the browser used. */
  protocol?: string;
  /** `host[:port]` as the browser used. */
  host?: string;
  /** The full path and query (before any router stripped a mount path). */
  url?: string;
}

/** Anything with a Fetch handler: a {@link Dashboard}, or any `{ fetch }` app. */
export interface FetchHandler {
  fetch(request: Request, ...rest: unknown[]): Promise<Response>;
}

function headersOf(req: NodeRequestLike, host: string): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  if (raw) {
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i] as string;
      if (!name.startsWith(':')) headers.append(name, raw[i + 1] as string);
    }
  } else {
    for (const [name, value] of Object.entries(req.headers)) {
      if (name.startsWith(':') || value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
  }
  headers.set('host', host);
  return headers;
}

/** The body as a stream that reads the Node request only as fast as the dashboard consumes it. */
function bodyOf(req: NodeRequestLike & { body?: unknown }): BodyInit | null {
  if (req.method === 'GET' || req.method === 'HEAD') return null;
  if (req.readableEnded) {
    // A body parser of the host ran first: rebuild the form from what it parsed.
    const parsed = req.body;
    if (typeof parsed === 'string') return parsed;
    if (parsed instanceof Uint8Array) return parsed as BodyInit;
    if (parsed && typeof parsed === 'object') {
      return new URLSearchParams(
        Object.entries(parsed as Record<string, unknown>).flatMap(([k, v]) =>
          (Array.isArray(v) ? v : [v]).map((item) => [k, String(item)]),
        ),
      );
    }
    return null;
  }
  const chunks = req[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(typeof value === 'string' ? encoder.encode(value) : new Uint8Array(value));
    },
    async cancel() {
      await chunks.return?.();
    },
  });
}

/**
 * Builds a Fetch `Request` from a Node request and what the framework resolved about it (the body
 * streams as it is read). The building block of {@link toNodeHandler}, for other Node frameworks.
 *
 * @example
 * const request = toFetchRequest(req, { ip: req.ip, protocol: req.protocol, url: req.originalUrl });
 * await writeFetchResponse(await ui.fetch(request), res);
 */
export function toFetchRequest(req: NodeRequestLike & { body?: unknown }, facts: NodeRequestFacts): Request {
  const protocol = facts.protocol ?? (req.socket?.encrypted ? 'https' : 'http');
  const host = facts.host ?? (typeof req.headers.host === 'string' ? req.headers.host : 'localhost');
  const url = new URL(facts.url ?? req.url ?? '/', `${protocol}://${host}`);
  const controller = new AbortController();
  req.on('close', () => controller.abort());
  const body = bodyOf(req);
  const init: RequestInit & { duplex?: 'half' } = {
    method: req.method ?? 'GET',
    headers: headersOf(req, url.host),
    body,
    signal: controller.signal,
  };
  if (body instanceof ReadableStream) init.duplex = 'half';
  const request = new Request(url, init);
  rememberClientAddress(request, facts.ip ?? req.socket?.remoteAddress);
  return request;
}

/**
 * Writes a Fetch `Response` to a Node response: status, every header (each `Set-Cookie` separately)
 * and the body streamed with backpressure (it waits for `drain`).
 *
 * @example
 * await writeFetchResponse(await ui.fetch(toFetchRequest(req, { ip: req.socket.remoteAddress })), res);
 */
export async function writeFetchResponse(response: Response, res: NodeResponseLike): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie') res.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || closed) break;
      if (!res.write(value))
        await new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
    }
  } finally {
    if (closed) await reader.cancel().catch(() => {});
    else res.end();
  }
}

/** Express's own answer for the host (trust proxy honoured): `X-Forwarded-Host` only from a trusted proxy. */
function expressHost(req: NodeRequestLike & { app?: { get?: (name: string) => unknown } }): string | undefined {
  const trust = req.app?.get?.('trust proxy fn') as ((address: string | undefined, i: number) => boolean) | undefined;
  const forwarded = req.headers['x-forwarded-host'];
  if (typeof forwarded === 'string' && trust?.(req.socket?.remoteAddress, 0)) {
    return forwarded.split(',')[0]?.trim() || undefined;
  }
  return typeof req.headers.host === 'string' ? req.headers.host : undefined;
}

/**
 * The dashboard as Node middleware: Express 4 and 5 (`app.use('/dashboard', toNodeHandler(ui))`),
 * connect, or `http.createServer(toNodeHandler(ui))`. The client address and scheme come from
 * Express (`req.ip`, `req.protocol`: its `trust proxy` setting), else from the socket. Mount it
 * before any body parser; if one ran first, a parsed form is rebuilt from `req.body`.
 *
 * @example
 * app.use('/dashboard', toNodeHandler(ui));                           // Express
 * http.createServer(toNodeHandler(ui)).listen(3000);                  // plain Node, basePath '/'
 */
export function toNodeHandler(ui: FetchHandler) {
  return async function keygateDashboard(
    req: NodeRequestLike & { ip?: string; protocol?: string; originalUrl?: string },
    res: NodeResponseLike,
    next?: (err?: unknown) => void,
  ): Promise<void> {
    try {
      const request = toFetchRequest(req, {
        ip: req.ip,
        protocol: req.protocol,
        host: expressHost(req),
        url: req.originalUrl ?? req.url,
      });
      await writeFetchResponse(await ui.fetch(request), res);
    } catch (err) {
      if (next) return next(err);
      if (!res.headersSent) res.statusCode = 500;
      if (!res.writableEnded) res.end();
    }
  };
}

/** The part of a Fastify request the plugin uses. */
export interface FastifyRequestLike {
  raw: NodeRequestLike;
  ip: string;
  protocol: string;
  host?: string;
  hostname: string;
}
/** The part of a Fastify reply the plugin uses. */
export interface FastifyReplyLike {
  raw: NodeResponseLike;
  hijack(): void;
}
/** The part of a Fastify instance (4 or 5) the plugin uses. */
export interface FastifyLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    parser: (req: unknown, payload: unknown, done: (err: null, body?: unknown) => void) => void,
  ): void;
  all(path: string, handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<void>): unknown;
}

/**
 * The dashboard as a Fastify 4/5 plugin, registered under the mount path:
 * `app.register(toFastifyPlugin(ui), { prefix: '/dashboard' })`. Encapsulated: it leaves the
 * host's body parsers alone (its own routes read the raw body). The client address and scheme come
 * from Fastify (`request.ip`, `request.protocol`: its `trustProxy` setting).
 *
 * @example
 * await app.register(toFastifyPlugin(ui), { prefix: '/dashboard' });
 */
export function toFastifyPlugin(ui: FetchHandler) {
  return async function keygateDashboard(app: FastifyLike): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, _payload, done) => done(null));
    const handler = async (request: FastifyRequestLike, reply: FastifyReplyLike) => {
      reply.hijack();
      const req = request.raw;
      const fetchRequest = toFetchRequest(req, {
        ip: request.ip,
        protocol: request.protocol,
        host: request.host ?? request.hostname,
        url: req.url,
      });
      try {
        await writeFetchResponse(await ui.fetch(fetchRequest), reply.raw);
      } catch {
        if (!reply.raw.headersSent) reply.raw.statusCode = 500;
        if (!reply.raw.writableEnded) reply.raw.end();
      }
    };
    app.all('/', handler);
    app.all('/*', handler);
  };
}
