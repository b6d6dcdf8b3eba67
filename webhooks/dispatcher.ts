import { InvalidInputError } from '#errors';
import { type EventHook, emitSafely } from '../src/events.js';
import { redactKeys } from '../src/redact/keys.js';
import { validWholeNumber } from '../src/validate/whole.js';
import type { ClaimedDelivery, Outbox, WebhookEndpoint } from '../src/vocabulary/outbox.js';
import { type FullRetryPolicy, nextAttemptMs, type RetryPolicy, validRetryPolicy } from './backoff.js';
import { repeating } from './repeat.js';
import { signWebhook } from './sign.js';

/**
 * Options of {@link createWebhookDispatcher}.
 *
 * @example
 * const options: WebhookDispatcherOptions = { outbox: capabilityOf(store, 'outbox')!, timeoutMs: 5_000 };
 */
export interface WebhookDispatcherOptions {
  /** Where events and deliveries are: a store's `outbox` capability. */
  outbox: Outbox;
  /** @default globalThis.fetch */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Now, in epoch milliseconds. @default Date.now */
  clock?: () => number;
  /** A number in [0, 1), for the retries' jitter. @default Math.random */
  random?: () => number;
  /** How long one attempt may take before it counts as failed (`timeout`), in milliseconds. @default 10_000 */
  timeoutMs?: number;
  /** How long a claim holds a delivery, in milliseconds; more than `timeoutMs`. @default 60_000 */
  leaseMs?: number;
  /** The most deliveries one `runOnce` claims (and sends at once). @default 20 */
  batchSize?: number;
  /** Exponential backoff with full jitter. @default { baseDelayMs: 30_000, maxDelayMs: 21_600_000, giveUpAfterMs: 86_400_000 } */
  retry?: RetryPolicy;
  /**
   * An endpoint whose attempts fail without a break (no 2xx in between) for this many
   * milliseconds, or one of whose deliveries gives up (past `retry.giveUpAfterMs`), is disabled, and
   * `webhook.endpoint_disabled` is published. @default 86_400_000 (24 hours)
   */
  disableAfterMs?: number;
  /** Receives `webhook.endpoint_disabled`. Its failures are swallowed. @default undefined */
  onEvent?: EventHook;
}

/**
 * What one {@link WebhookDispatcher.runOnce} did.
 *
 * @example
 * const { delivered, failed, gaveUp } = await dispatcher.runOnce();
 */
export interface DispatchReport {
  /** Deliveries claimed. */
  readonly claimed: number;
  /** Answered 2xx. */
  readonly delivered: number;
  /** Failed, to be tried again. */
  readonly failed: number;
  /** Failed for good (past `retry.giveUpAfterMs`). */
  readonly gaveUp: number;
}

/**
 * Sends the outbox's deliveries. See {@link createWebhookDispatcher}.
 *
 * @example
 * const dispatcher = createWebhookDispatcher({ outbox });
 * dispatcher.start({ intervalMs: 5_000 });
 */
export interface WebhookDispatcher {
  /** Claims due deliveries, sends them at once, records every outcome. */
  runOnce(): Promise<DispatchReport>;
  /** Runs `runOnce` every `intervalMs` (default 5,000) on an unref'd timer, until `stop`. */
  start(options?: { intervalMs?: number; onError?: (err: unknown) => void }): void;
  /** Stops the loop and waits for the run under way. */
  stop(): Promise<void>;
}

/**
 * A webhook dispatcher over an outbox: each `runOnce` claims the due deliveries of enabled endpoints
 * under a lease (no other dispatcher, in any process, sends the same delivery while it holds it),
 * POSTs each event as JSON with the Standard Webhooks headers (`webhook-id`: the event's id, the same
 * on every retry, so a receiver de-duplicates; `webhook-timestamp`: unix seconds;
 * `webhook-signature`: `v1,<base64 HMAC-SHA256>` under the endpoint's secret), and records the
 * outcome. A 2xx is delivered; any other status, a redirect, a network error or a timeout is retried
 * with exponential backoff and full jitter (30 s doubling up to 6 h, for 24 h by default), then
 * `failed`. An endpoint failing without a break for `disableAfterMs` (24 h), or whose delivery gives
 * up, is disabled and
 * `webhook.endpoint_disabled` is published to the outbox (its account's other endpoints get it) and
 * `onEvent`. At least once: a dispatcher that dies mid-send leaves the delivery to be claimed again
 * once its lease ends.
 *
 * @example
 * import { createWebhookDispatcher } from 'keygate/webhooks';
 * const dispatcher = createWebhookDispatcher({ outbox: capabilityOf(store, 'outbox')! });
 * dispatcher.start({ intervalMs: 5_000 });
 * process.on('SIGTERM', () => dispatcher.stop());
 */
export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const outbox = options?.outbox;
  if (!outbox || typeof outbox.claim !== 'function') {
    throw new InvalidInputError('outbox', "outbox must be an Outbox (a store's outbox capability)");
  }
  const send = options.fetch ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init));
  const clock = options.clock ?? Date.now;
  const random = options.random ?? Math.random;
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? 10_000);
  const leaseMs = positive('leaseMs', options.leaseMs ?? 60_000);
  if (leaseMs <= timeoutMs) throw new InvalidInputError('leaseMs', 'leaseMs must be more than timeoutMs');
  const batchSize = validWholeNumber('batchSize', options.batchSize ?? 20, 1, 1_000);
  const retry: FullRetryPolicy = validRetryPolicy(options.retry);
  const disableAfterMs = positive('disableAfterMs', options.disableAfterMs ?? 24 * 3_600_000);

  async function attempt(claimed: ClaimedDelivery): Promise<{ status: number | null; error: string | null }> {
    const { event, endpoint } = claimed;
    const body = JSON.stringify(event);
    const timestamp = Math.floor(clock() / 1000);
    const signature = await signWebhook({ secret: endpoint.secret, id: event.id, timestamp, body });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await send(endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'keygate-webhooks',
          'webhook-id': event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
        },
        body,
        redirect: 'manual',
        signal: controller.signal,
      });
      // The body is not read: only the status counts, and an unread body must not hold the socket.
      await response.body?.cancel().catch(() => {});
      return { status: response.status, error: null };
    } catch (err) {
      return { status: null, error: controller.signal.aborted ? 'timeout' : networkError(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  async function deliver(claimed: ClaimedDelivery): Promise<'delivered' | 'failed' | 'gaveUp'> {
    const { status, error } = await attempt(claimed);
    const nowMs = clock();
    const base = { deliveryId: claimed.delivery.id, leaseToken: claimed.leaseToken, nowMs, statusCode: status };
    if (status !== null && status >= 200 && status < 300) {
      await outbox.complete(base);
      return 'delivered';
    }
    const retryAtMs = nextAttemptMs(retry, {
      nowMs,
      createdMs: Date.parse(claimed.delivery.createdAt),
      failures: claimed.delivery.attempts + 1,
      random: random(),
    });
    // A delivery that gives up failed every attempt for about a day: its endpoint is disabled with it.
    const outcome = await outbox.fail({
      ...base,
      error,
      retryAtMs,
      disableAfterMs: retryAtMs === null ? 0 : disableAfterMs,
    });
    if (outcome.endpointDisabled) await disabled(outcome.endpointDisabled, nowMs);
    return retryAtMs === null ? 'gaveUp' : 'failed';
  }

  async function disabled(endpoint: WebhookEndpoint, nowMs: number): Promise<void> {
    const event = {
      type: 'webhook.endpoint_disabled' as const,
      keyId: null,
      accountId: endpoint.accountId,
      hint: null,
      at: new Date(nowMs).toISOString(),
      endpointId: endpoint.id,
      url: endpoint.url,
    };
    await outbox.publish(event).catch(() => {});
    emitSafely(options.onEvent, event);
  }

  async function runOnce(): Promise<DispatchReport> {
    const claimed = await outbox.claim({ nowMs: clock(), leaseMs, limit: batchSize });
    const outcomes = await Promise.all(claimed.map(deliver));
    const count = (what: string) => outcomes.filter((o) => o === what).length;
    return { claimed: claimed.length, delivered: count('delivered'), failed: count('failed'), gaveUp: count('gaveUp') };
  }

  return { runOnce, ...repeating(runOnce, 5_000) };
}

function positive(field: string, value: number): number {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw new InvalidInputError(field, `${field} must be a number of milliseconds > 0`);
  }
  return value;
}

// The error's name and a redacted message: a driver may echo the URL, never a secret of ours.
function networkError(err: unknown): string {
  const message =
    err instanceof Error ? `${err.name}: ${(err.cause as Error | undefined)?.message ?? err.message}` : String(err);
  return redactKeys(`network_error: ${message}`).slice(0, 500);
}
