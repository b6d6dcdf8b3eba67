import type { Notification, Pool, PoolClient } from 'pg';

/** What a LISTEN connection reports to the store. */
export interface ListenHandlers {
  /** A NOTIFY payload of the channel. */
  onPayload(payload: string): void;
  /**
   * LISTEN is in place, for the first time or again after a drop. Notifications sent before this
   * moment were not received, so whoever keeps copies of records must drop them (a resync).
   */
  onListening(): void;
  /** The connection failed or could not be taken; a retry is already scheduled. */
  onError(err: unknown): void;
}

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

/**
 * Holds one pooled connection in LISTEN on `channel` and takes a new one, with exponential backoff
 * (100 ms doubling to 5 s), whenever it drops. Each time LISTEN is in place, `onListening` runs, so
 * the changes missed while the connection was down are covered by a resync instead of the cache TTL.
 * Returns the function that stops listening.
 *
 * @example
 * const stop = listenOnPool(pool, 'keygate_changes', { onPayload, onListening: resync, onError });
 */
export function listenOnPool(pool: Pool, channel: string, handlers: ListenHandlers): () => void {
  const listener = new PoolListener(pool, channel, handlers);
  void listener.start();
  return () => listener.stop();
}

/** One LISTEN connection and its reconnection, in the order the steps happen. */
class PoolListener {
  private conn: PoolClient | undefined;
  private stopped = false;
  private failures = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly channel: string,
    private readonly handlers: ListenHandlers,
  ) {}

  /** Takes a connection, then LISTENs on it; any failure schedules the next attempt. */
  async start(): Promise<void> {
    this.timer = undefined;
    const client = await this.connect();
    if (client) await this.listen(client);
  }

  /** Stops for good: cancels a pending attempt and destroys the LISTEN connection. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.conn;
    this.conn = undefined;
    if (!client) return;
    client.removeListener('notification', this.onNotification);
    // Destroying the connection ends its LISTEN with it; a LISTENing connection must not go back to the pool.
    client.release(true);
  }

  private async connect(): Promise<PoolClient | undefined> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      this.fail(err);
      return undefined;
    }
    if (this.stopped) {
      client.release();
      return undefined;
    }
    this.attach(client);
    return client;
  }

  private attach(client: PoolClient): void {
    this.conn = client;
    client.on('notification', this.onNotification);
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('LISTEN connection ended')));
  }

  private async listen(client: PoolClient): Promise<void> {
    try {
      // The channel is a validated identifier (see the store's constructor); LISTEN takes no parameters.
      await client.query(`LISTEN "${this.channel}"`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.conn !== client) return;
    this.failures = 0;
    this.handlers.onListening();
  }

  private readonly onNotification = (msg: Notification): void => {
    if (msg.channel === this.channel && msg.payload !== undefined) this.handlers.onPayload(msg.payload);
  };

  private lost(client: PoolClient, err: unknown): void {
    if (this.conn !== client) return;
    this.conn = undefined;
    client.removeListener('notification', this.onNotification);
    client.release(err instanceof Error ? err : new Error('LISTEN connection ended'));
    this.fail(err);
  }

  private fail(err: unknown): void {
    this.handlers.onError(err);
    if (this.stopped) return;
    const delay = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** this.failures);
    this.failures++;
    this.timer = setTimeout(() => void this.start(), delay);
  }
}
