// `node examples/email-verification/webhook-receiver.js`: a webhook endpoint for trying keygate's
// webhooks locally. It checks each delivery's signature with `verifyWebhook` (keygate/webhooks) under
// WEBHOOK_SECRET (the `whsec_…` that `keygate webhooks add` printed), prints one line per event and
// answers 204; a delivery whose signature does not check out gets 400 and is not printed as an event.
// Environment: WEBHOOK_SECRET (required), PORT (default 4000), HOST (default 127.0.0.1).
import { createServer } from 'node:http';
import { InvalidSignatureError, verifyWebhook } from 'keygate/webhooks';

const secret = process.env.WEBHOOK_SECRET;
if (!secret?.startsWith('whsec_')) {
  console.error('WEBHOOK_SECRET must be the whsec_… secret that `keygate webhooks add` printed');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 4000);
const host = process.env.HOST ?? '127.0.0.1';
// Deliveries are at least once: the same event (its webhook-id) may come again after a lost answer.
const seen = new Set();

const server = createServer((req, res) => {
  /** @type {Buffer[]} */
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      const event = await verifyWebhook({ secret, headers: req.headers, body: Buffer.concat(chunks) });
      const again = seen.has(event.id) ? ' (again)' : '';
      seen.add(event.id);
      console.log(`${event.at} ${event.type} ${event.accountId} ${JSON.stringify(event.data)}${again}`);
      res.writeHead(204).end();
    } catch (err) {
      const bad = err instanceof InvalidSignatureError;
      console.log(bad ? `refused a delivery: ${err.reason}` : `could not read a delivery: ${err}`);
      res.writeHead(bad ? 400 : 500).end();
    }
  });
});
server.listen(port, host, () => {
  const { port: actual } = /** @type {import('node:net').AddressInfo} */ (server.address());
  console.log(`webhook receiver on http://${host}:${actual}/`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => process.exit(0)));
