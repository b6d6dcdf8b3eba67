import { generateKey, KeygateError } from 'keygate';
import { InvalidSignatureError, signWebhook, verifyWebhook } from 'keygate/webhooks';
import { describe, expect, it } from 'vitest';

const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const NOW_MS = Date.UTC(2026, 10, 24, 18, 0, 0);
const NOW_S = NOW_MS / 1000;
const event = {
  id: 'evt_1',
  type: 'key.revoked',
  accountId: 'acct_1',
  at: '2026-11-24T18:00:00.000Z',
  data: { keyId: 'key_1' },
};
const body = JSON.stringify(event);

async function headersFor(overrides: Record<string, string> = {}, payload = body, timestamp = NOW_S) {
  return {
    'webhook-id': event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': await signWebhook({ secret, id: event.id, timestamp, body: payload }),
    ...overrides,
  };
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('verifyWebhook', () => {
  it('returns the event of a correctly signed webhook, from a plain object or Fetch Headers', async () => {
    const headers = await headersFor();
    expect(await verifyWebhook({ secret, headers, body, nowMs: NOW_MS })).toEqual(event);
    expect(
      await verifyWebhook({
        secret,
        headers: new Headers(headers),
        body: new TextEncoder().encode(body),
        nowMs: NOW_MS,
      }),
    ).toEqual(event);
  });

  it('signs the Standard Webhooks way: v1, base64 HMAC-SHA256 of id.timestamp.body under the decoded secret', async () => {
    const { createHmac } = await import('node:crypto');
    const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
      .update(`${event.id}.${NOW_S}.${body}`)
      .digest('base64');
    expect(await signWebhook({ secret, id: event.id, timestamp: NOW_S, body })).toBe(`v1,${expected}`);
  });

  it('accepts a space-separated list in which one signature matches (a secret being rotated)', async () => {
    const good = (await headersFor())['webhook-signature'];
    const headers = await headersFor({ 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} ${good}` });
    expect(await verifyWebhook({ secret, headers, body, nowMs: NOW_MS })).toEqual(event);
  });

  it('refuses a tampered body with invalid_signature (bad_signature)', async () => {
    const headers = await headersFor();
    const tampered = body.replace('key_1', 'key_2');
    const err = await refusal(verifyWebhook({ secret, headers, body: tampered, nowMs: NOW_MS }));
    expect(err).toBeInstanceOf(InvalidSignatureError);
    expect(err).toBeInstanceOf(KeygateError);
    expect(err).toMatchObject({ code: 'invalid_signature', reason: 'bad_signature' });
  });

  it('refuses a signature made with another secret, or a changed webhook-id', async () => {
    const other = `whsec_${Buffer.from('another secret of 32 bytes......').toString('base64')}`;
    const headers = await headersFor();
    expect(await refusal(verifyWebhook({ secret: other, headers, body, nowMs: NOW_MS }))).toMatchObject({
      reason: 'bad_signature',
    });
    expect(
      await refusal(verifyWebhook({ secret, headers: { ...headers, 'webhook-id': 'evt_2' }, body, nowMs: NOW_MS })),
    ).toMatchObject({
      reason: 'bad_signature',
    });
  });

  it('refuses a timestamp more than 5 minutes away, either way, and honours toleranceSec', async () => {
    for (const skew of [-301, 301]) {
      const headers = await headersFor({}, body, NOW_S + skew);
      expect(await refusal(verifyWebhook({ secret, headers, body, nowMs: NOW_MS }))).toMatchObject({
        code: 'invalid_signature',
        reason: 'stale_timestamp',
      });
    }
    const edge = await headersFor({}, body, NOW_S - 300);
    expect(await verifyWebhook({ secret, headers: edge, body, nowMs: NOW_MS })).toEqual(event);
    expect(
      await refusal(verifyWebhook({ secret, headers: edge, body, nowMs: NOW_MS, toleranceSec: 60 })),
    ).toMatchObject({
      reason: 'stale_timestamp',
    });
  });

  it('refuses a webhook without its headers, and a signed body that is not this id’s event', async () => {
    const headers = await headersFor();
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const { [name]: _, ...without } = headers as Record<string, string>;
      expect(await refusal(verifyWebhook({ secret, headers: without, body, nowMs: NOW_MS }))).toMatchObject({
        reason: 'missing_header',
      });
    }
    const other = JSON.stringify({ ...event, id: 'evt_9' });
    expect(
      await refusal(verifyWebhook({ secret, headers: await headersFor({}, other), body: other, nowMs: NOW_MS })),
    ).toMatchObject({
      reason: 'bad_body',
    });
  });

  it('refuses a secret that is not whsec_ base64 as invalid_input naming secret', async () => {
    expect(
      await refusal(verifyWebhook({ secret: 'hunter2', headers: await headersFor(), body, nowMs: NOW_MS })),
    ).toMatchObject({
      code: 'invalid_input',
      field: 'secret',
    });
  });

  it('keeps no raw key it is given in its message', () => {
    const raw = generateKey({ mode: 'live' });
    expect(String(new InvalidSignatureError('bad_signature', raw))).not.toContain(raw);
  });
});
