// The example's webhook receiver (examples/email-verification/webhook-receiver.js), run as `node` runs
// it: a delivery signed with its WEBHOOK_SECRET is answered 204 and printed; a tampered one gets 400.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { MemoryOutbox, signWebhook } from 'keygate/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../../cli/support/keygate.js';

const RECEIVER = join(ROOT, 'examples/email-verification/webhook-receiver.js');
let child: ChildProcess;
let url = '';
let secret = '';
const lines: string[] = [];

beforeAll(async () => {
  ensureBuilt();
  ({ secret } = await new MemoryOutbox().endpoints.create(
    { accountId: 'acct_demo', url: 'http://127.0.0.1:4000/' },
    { allowPrivateNetworks: true },
  ));
  child = spawn(process.execPath, [RECEIVER], {
    cwd: ROOT,
    env: { ...process.env, WEBHOOK_SECRET: secret, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
  while (!url) {
    await once(child.stdout as NodeJS.ReadableStream, 'data');
    url = lines.map((l) => /^webhook receiver on (\S+)$/.exec(l)?.[1]).find(Boolean) ?? '';
  }
}, 120_000);
afterAll(async () => {
  child.kill('SIGTERM');
  if (child.exitCode === null) await once(child, 'exit');
});

async function deliver(body: string, signedBody = body) {
  const id = 'evt_mhc2xg8k10000k3j9x0c1qa';
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = await signWebhook({ secret, id, timestamp, body: signedBody });
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    },
    body,
  });
  return res.status;
}

describe('the example webhook receiver', () => {
  it('answers 204 to a signed delivery and prints its event; 400 to a tampered one', async () => {
    const event = {
      id: 'evt_mhc2xg8k10000k3j9x0c1qa',
      type: 'key.revoked',
      accountId: 'acct_demo',
      at: new Date().toISOString(),
      data: { keyId: 'key_1', hint: 'mk_live_…Xy9Z' },
    };
    const body = JSON.stringify(event);
    expect(await deliver(body)).toBe(204);
    expect(await deliver(body.replace('acct_demo', 'acct_evil'), body)).toBe(400);
    expect(lines).toContainEqual(expect.stringMatching(/ key\.revoked acct_demo \{"keyId":"key_1"/));
    expect(lines).toContain('refused a delivery: bad_signature');
    expect(lines.join('\n')).not.toContain('acct_evil');
  });
});
