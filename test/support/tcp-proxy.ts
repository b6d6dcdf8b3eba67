import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a service, to take the service away honestly: `cut()` drops every
 * open connection and refuses new ones, as a network partition or a database restart does;
 * `resume()` accepts connections again on the same port. `stall()` keeps every connection open but
 * holds every byte in either direction (a congested link, a paused server) until `unstall()`, which
 * delivers what was held, in order: a request that timed out on the client's side still reaches the
 * service, and its answer comes late. `stall('replies')` holds only what the service sends: requests
 * reach it and are applied, their answers wait, and a `cut()` then loses them (applied, never
 * answered).
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  // What a stall holds: bytes towards the service, towards the client.
  private stalled = { service: false, client: false };
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
      this.forward(client, upstream, 'service');
      this.forward(upstream, client, 'client');
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
    this.stalled = { service: false, client: false };
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Holds every byte of every connection until `unstall()`; connections stay open. Both ways by
   * default; `'replies'`: only the service's, so requests are applied and their answers wait.
   */
  stall(only?: 'replies'): void {
    this.stalled = { service: only !== 'replies', client: true };
  }

  /** Delivers the bytes held since `stall()`, in the order they came, and forwards again. */
  unstall(): void {
    this.stalled = { service: false, client: false };
    for (const deliver of this.held.splice(0)) deliver();
  }

  /** Bytes from `from` go to `to` (towards `towards`), or wait in `held` while that way is stalled. */
  private forward(from: Socket, to: Socket, towards: 'service' | 'client'): void {
    from.on('data', (chunk: Buffer) => {
      const deliver = () => {
        if (!to.destroyed) to.write(chunk);
      };
      if (this.stalled[towards]) this.held.push(deliver);
      else deliver();
    });
    from.on('end', () => {
      if (this.stalled[towards]) this.held.push(() => to.end());
      else to.end();
    });
  }
}
