/**
 * `keygate/webhooks`: events that leave the process. A backend's outbox (`capabilityOf(store,
 * 'outbox')`) keeps every key event with the write that caused it; {@link createWebhookDispatcher}
 * sends them to each account's endpoints, signed the Standard Webhooks way, never to an internal
 * address; a receiver checks them with {@link verifyWebhook}. Web APIs (fetch, Web Crypto), but for
 * the send on Node (node:http and node:dns, chosen by the `node` condition), which checks every
 * address a name resolves to: it runs on Node, Workers, Deno and Bun.
 *
 * @example
 * import { createWebhookDispatcher, verifyWebhook } from 'keygate/webhooks';
 *
 * @packageDocumentation
 */

export { InvalidSignatureError } from '#errors';
export { MemoryOutbox } from '../src/outbox/memory.js';
export type { OutboxEvent } from '../src/types.js';
export type {
  AttemptResult,
  ClaimArgs,
  ClaimedDelivery,
  CreatedWebhookEndpoint,
  DeliveryQuery,
  FailedAttempt,
  FailOutcome,
  Outbox,
  OutboxEventInput,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChanges,
  WebhookEndpointInput,
  WebhookEndpointOptions,
  WebhookEndpoints,
} from '../src/vocabulary/outbox.js';
export { DEFAULT_RETRY, type FullRetryPolicy, type RetryPolicy } from './backoff.js';
export {
  type AttemptFailure,
  createWebhookDispatcher,
  type DispatchReport,
  type WebhookDispatcher,
  type WebhookDispatcherOptions,
} from './dispatcher.js';
export type { DeliveryFailure } from './failure.js';
export { type OutboxEventHooks, type OutboxEventsOptions, outboxEvents } from './forward.js';
export {
  type KeyNotifications,
  type KeyNotificationsOptions,
  type KeyNotificationsReport,
  keyNotifications,
} from './notifications.js';
export type { ResolveHost } from './send/types.js';
export { signWebhook } from './sign.js';
export { stableEventId } from './stable-id.js';
export { type VerifyWebhookArgs, verifyWebhook, type WebhookHeaders } from './verify.js';
