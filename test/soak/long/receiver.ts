// The webhook receiver of the soak: one local HTTP server for every account's endpoint
// (`/hooks/<accountId>`), which checks each delivery's signature with that endpoint's secret, answers
// 503 to a few first attempts (so retries happen), and counts what it got: events by type, duplicates,
// bad signatures. `expect` and `missing` tell which key changes never arrived.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from 'keygate/webhooks';

/** One in this many first attempts is answered 503, so the dispatcher retries it. */
const FAIL_ONE_IN = 20;

export interface ReceiverTally {
  /** Deliveries answered 2xx. */
  delivered: number;
  /** Deliveries answered 503 on purpose. */
  refused: number;
  /** A 2xx delivery of an event already delivered (at least once: allowed, counted). */
  duplicates: number;
  badSignatures: number;
  byType: Map<string, number>;
}

export interface Receiver {
  readonly url: string;
  readonly tally: ReceiverTally;
  /** The secret of `accountId`'s endpoint, once created. */
  setSecret(accountId: string, secret: string): void;
  /** A key change made: an event of `type` for `keyId` must arrive. */
  expect(type: string, keyId: string): void;
  /** Changes made whose event has not arrived yet. */
  missing(): number;
  /** Some changes whose event has not arrived, for the report. */
  missingExamples(): string[];
  close(): Promise<void>;
}

/**
 * Starts the receiver on 127.0.0.1 (an ephemeral port).
 *
 * @example
 * const receiver = await startReceiver(); // receiver.url + '/hooks/acct_1'
 */
export async function startReceiver(): Promise<Receiver> {
  const secrets = new Map<string, string>();
  // `${type} ${keyId}` -> changes made minus events received; entries at 0 are dropped, so it stays small.
  const owed = new Map<string, number>();
  // Event ids delivered, for duplicates; ids seen once refused, so a retry is not refused again.
  const delivered = new Set<string>();
  const refusedOnce = new Set<string>();
  const tally: ReceiverTally = { delivered: 0, refused: 0, duplicates: 0, badSignatures: 0, byType: new Map() };
  let attempts = 0;

  const settle = (key: string, by: number) => {
    const left = (owed.get(key) ?? 0) + by;
    if (left === 0) owed.delete(key);
    else owed.set(key, left);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const accountId = decodeURIComponent((req.url ?? '').replace(/^\/hooks\//, ''));
      const secret = secrets.get(accountId);
      const body = Buffer.concat(chunks).toString('utf8');
      let event: { id: string; type: string; data?: { keyId?: string } };
      try {
        if (!secret) throw new Error('no endpoint');
        event = (await verifyWebhook({ secret, headers: req.headers, body })) as typeof event;
      } catch {
        tally.badSignatures++;
        res.writeHead(400).end();
        return;
      }
      if (!delivered.has(event.id) && !refusedOnce.has(event.id) && ++attempts % FAIL_ONE_IN === 0) {
        refusedOnce.add(event.id);
        tally.refused++;
        res.writeHead(503).end();
        return;
      }
      refusedOnce.delete(event.id);
      if (delivered.has(event.id)) tally.duplicates++;
      else {
        delivered.add(event.id);
        tally.delivered++;
        tally.byType.set(event.type, (tally.byType.get(event.type) ?? 0) + 1);
        if (event.data?.keyId) settle(`${event.type} ${event.data.keyId}`, -1);
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    tally,
    setSecret: (accountId, secret) => void secrets.set(accountId, secret),
    expect: (type, keyId) => settle(`${type} ${keyId}`, 1),
    missing: () => [...owed.values()].reduce((n, v) => n + Math.max(0, v), 0),
    missingExamples: () => [...owed.entries()].filter(([, v]) => v > 0).map(([k]) => k),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
