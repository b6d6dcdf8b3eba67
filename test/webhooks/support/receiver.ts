import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local HTTP endpoint that records every webhook and answers with `status(request)`. */
export interface Receiver {
  url(path: string): string;
  readonly received: Received[];
  /** The most requests of one `webhook-id` and path that were ever in flight at once. */
  readonly maxInFlight: number;
  status: (request: Received) => number;
  /** Milliseconds to wait before answering `request`. */
  delayMs: (request: Received) => number;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 and a free port. */
export async function startReceiver(): Promise<Receiver> {
  const inFlight = new Map<string, number>();
  const receiver = {
    received: [] as Received[],
    maxInFlight: 0,
    status: (_: Received) => 204,
    delayMs: (_: Received) => 0,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      receiver.received.push(request);
      const slot = `${req.headers['webhook-id']} ${request.path}`;
      inFlight.set(slot, (inFlight.get(slot) ?? 0) + 1);
      receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight.get(slot) ?? 0);
      setTimeout(() => {
        inFlight.set(slot, (inFlight.get(slot) ?? 1) - 1);
        res.writeHead(receiver.status(request)).end();
      }, receiver.delayMs(request));
    });
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return receiver;
}
