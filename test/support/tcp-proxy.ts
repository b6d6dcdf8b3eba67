import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a service, to take the service away honestly: `cut()` drops every
 * open connection and refuses new ones, as a network partition or a database restart does;
 * `resume()` accepts connections again on the same port. `stall()` keeps every connection open but
 * holds every byte in either direction (a congested link, a paused server) until `unstall()`, which
 * delivers what was held, in order: a request that timed out on the client's side still reaches the
 * service, and its answer comes late.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  private readonly held: Array<() => void> = [];
  port = 0;

  constructor(
    private readonly host: string,
    private readonly targetPort: number,
  ) {}

  /** Starts listening (on a free port the first time) and returns the port. */
  async resume(): Promise<number> {
    if (this.server) return this.port;
    const server = createServer((client) => {
      const upstream = connect({ host: this.host, port: this.targetPort });
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      this.forward(client, upstream);
      this.forward(upstream, client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
    return this.port;
  }

  /** Drops every connection and stops accepting new ones (bytes held by a stall are dropped too). */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.held.length = 0;
    this.stalled = false;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Holds every byte of every connection, both ways, until `unstall()`; connections stay open. */
  stall(): void {
    this.stalled = true;
  }

  /** Delivers the bytes held since `stall()`, in the order they came, and forwards again. */
  unstall(): void {
    this.stalled = false;
    for (const deliver of this.held.splice(0)) deliver();
  }

  /** Bytes from `from` go to `to`, or wait in `held` while stalled. */
  private forward(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      const deliver = () => {
        if (!to.destroyed) to.write(chunk);
      };
      if (this.stalled) this.held.push(deliver);
      else deliver();
    });
    from.on('end', () => {
      if (this.stalled) this.held.push(() => to.end());
      else to.end();
    });
  }
}
