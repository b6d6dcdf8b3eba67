import { InvalidSignatureError } from '#errors';
import type { OutboxEvent } from '../src/types.js';
import { checkOptionNames } from '../src/validate/options.js';
import { decodeBase64, hmacKey, signedContent } from './sign.js';

/**
 * The request headers `verifyWebhook` reads: a Fetch `Headers`, or a plain object as Node and most
 * frameworks give them (names in any case; an array value counts by its first entry).
 *
 * @example
 * const headers: WebhookHeaders = request.headers; // or req.headers in Express
 */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Arguments of {@link verifyWebhook}.
 *
 * @example
 * const args: VerifyWebhookArgs = { secret: process.env.WEBHOOK_SECRET!, headers: request.headers, body: await request.text() };
 */
export interface VerifyWebhookArgs {
  /** The endpoint's secret, `whsec_…`, as `keygate webhooks add` printed it. */
  secret: string;
  headers: WebhookHeaders;
  /** The raw body, exactly as received (not re-serialised JSON). */
  body: string | Uint8Array | ArrayBuffer;
  /** How far the `webhook-timestamp` may be from now, in seconds, either way. @default 300 */
  toleranceSec?: number;
  /** Now, in epoch milliseconds. @default Date.now() */
  nowMs?: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true });
const ARG_NAMES = ['secret', 'headers', 'body', 'toleranceSec', 'nowMs'] as const;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}

/**
 * Verifies a webhook keygate sent (Standard Webhooks: headers `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) and returns its event. Throws `InvalidSignatureError` (code
 * `invalid_signature`, with `reason`) when a header is missing (`missing_header`), the timestamp is
 * more than `toleranceSec` from now (`stale_timestamp`: a replay), no `v1` signature in the
 * space-separated list matches the body (`bad_signature`: a tampered body, another secret), or the
 * body is not an event (`bad_body`). Signatures are checked with Web Crypto's `verify`, in constant
 * time. Retries carry the same `webhook-id` (the event's `id`): de-duplicate on it.
 *
 * @example
 * const event = await verifyWebhook({ secret: process.env.WEBHOOK_SECRET!, headers: request.headers, body: await request.text() });
 * if (event.type === 'key.revoked') await forget(event.data.keyId);
 */
export async function verifyWebhook(args: VerifyWebhookArgs): Promise<OutboxEvent> {
  // A misspelt `toleranceSec` must not leave the default window in place unnoticed.
  checkOptionNames(args, ARG_NAMES, 'verifyWebhook');
  const key = await hmacKey(args?.secret);
  const id = header(args.headers ?? {}, 'webhook-id');
  const timestamp = header(args.headers ?? {}, 'webhook-timestamp');
  const signatures = header(args.headers ?? {}, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new InvalidSignatureError(
      'missing_header',
      'a webhook needs webhook-id, webhook-timestamp and webhook-signature',
    );
  }
  const toleranceSec = args.toleranceSec ?? 300;
  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  const nowSec = Math.floor((args.nowMs ?? Date.now()) / 1000);
  if (!(Math.abs(nowSec - seconds) <= toleranceSec)) {
    throw new InvalidSignatureError('stale_timestamp', `webhook-timestamp is more than ${toleranceSec} s from now`);
  }
  const body =
    typeof args.body === 'string'
      ? new TextEncoder().encode(args.body)
      : args.body instanceof Uint8Array
        ? args.body
        : new Uint8Array(args.body);
  const content = signedContent(id, timestamp, body);
  let valid = false;
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    const mac = version === 'v1' && value ? decodeBase64(value) : null;
    if (mac && mac.length === 32 && (await crypto.subtle.verify('HMAC', key, mac, content))) valid = true;
  }
  if (!valid) throw new InvalidSignatureError('bad_signature', 'no webhook-signature matches the body');
  let event: unknown;
  try {
    event = JSON.parse(decoder.decode(body));
  } catch {
    throw new InvalidSignatureError('bad_body', 'the webhook body is not JSON');
  }
  const e = event as Partial<OutboxEvent> | null;
  if (!e || typeof e !== 'object' || e.id !== id || typeof e.type !== 'string' || typeof e.accountId !== 'string') {
    throw new InvalidSignatureError('bad_body', 'the webhook body is not an event of this webhook-id');
  }
  return event as OutboxEvent;
}
