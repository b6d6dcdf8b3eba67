import { InvalidInputError } from '#errors';
import { randomBase62 } from '../key/base62.js';
import { quote } from '../redact/describe.js';
import { validAccountId } from '../validate/fields.js';
import { checkOptionNames } from '../validate/options.js';
import { validWholeNumber } from '../validate/whole.js';
import type {
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChanges,
  WebhookEndpointInput,
  WebhookEndpointOptions,
} from '../vocabulary/outbox.js';
import { validEventType } from './event.js';
import { refusedHost } from './targets.js';

// The one place that checks webhook endpoints and makes their ids and secrets, for every backend.

/**
 * An endpoint as a backend keeps it: its view and its signing secret.
 *
 * @example
 * const stored: StoredWebhookEndpoint = newWebhookEndpoint({ accountId: 'acct_1', url }, Date.now());
 */
export type StoredWebhookEndpoint = WebhookEndpoint & { readonly secret: string };

const MAX_URL = 2_000;
const MAX_EVENT_TYPES = 50;

/**
 * A new signing secret: `whsec_` and the base64 of 32 random bytes (Standard Webhooks).
 *
 * @example
 * webhookSecret() // 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw…'
 */
export function webhookSecret(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

const ENDPOINT_OPTION_NAMES = ['allowPrivateNetworks'] as const;
const INPUT_NAMES = ['accountId', 'url', 'eventTypes'] as const;

/**
 * The operator's options of an endpoint write, checked: a plain object (or undefined) whose only
 * member is `allowPrivateNetworks`, a boolean; anything else throws `InvalidInputError`.
 *
 * @example
 * validEndpointOptions({ allowPrivateNetworks: true }) // { allowPrivateNetworks: true }
 */
export function validEndpointOptions(options: WebhookEndpointOptions | undefined): { allowPrivateNetworks: boolean } {
  checkOptionNames(options, ENDPOINT_OPTION_NAMES, 'a webhook endpoint write');
  const allow = options?.allowPrivateNetworks ?? false;
  if (typeof allow !== 'boolean') {
    throw new InvalidInputError('allowPrivateNetworks', 'allowPrivateNetworks must be true or false', {
      reason: 'wrong_type',
    });
  }
  return { allowPrivateNetworks: allow };
}

/**
 * An endpoint URL: `https:` or `http:`, at most 2,000 characters, no user or password in it, and a
 * host that is not a loopback, private, link-local, metadata or other internal target (the list in
 * `src/outbox/targets.ts`; judged on the host as URL parsing leaves it, so `http://0x7f000001` is
 * 127.0.0.1) unless `allowPrivateNetworks` (the operator's development switch; default false);
 * anything else throws `InvalidInputError` naming `url`.
 *
 * @example
 * validWebhookUrl('https://example.com/hooks') // 'https://example.com/hooks'
 * validWebhookUrl('http://169.254.169.254/')   // throws: reason 'not_allowed' (link-local)
 */
export function validWebhookUrl(value: unknown, options?: WebhookEndpointOptions): string {
  const { allowPrivateNetworks } = validEndpointOptions(options);
  let url: URL | undefined;
  try {
    url = typeof value === 'string' && value.length <= MAX_URL ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new InvalidInputError('url', `url must be an http(s) URL of at most ${MAX_URL} characters`, {
      reason: 'unparseable',
    });
  }
  if (url.username !== '' || url.password !== '') {
    throw new InvalidInputError('url', 'url must not carry a user name or password', { reason: 'not_allowed' });
  }
  const refused = allowPrivateNetworks ? null : refusedHost(url.hostname);
  if (refused !== null) {
    throw new InvalidInputError(
      'url',
      `url must point at a public host: ${url.hostname} is ${refused}, where webhooks are not sent`,
      { reason: 'not_allowed' },
    );
  }
  return url.href;
}

/**
 * The event types an endpoint takes: 1-50 event types, or `['*']`; `InvalidInputError` naming `eventTypes`.
 *
 * @example
 * validEventTypes(['key.revoked', 'key.suspended']) // ['key.revoked', 'key.suspended']
 */
export function validEventTypes(value: unknown): readonly string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_EVENT_TYPES) {
    throw new InvalidInputError('eventTypes', `eventTypes must list 1-${MAX_EVENT_TYPES} event types, or ['*']`, {
      reason: 'wrong_type',
    });
  }
  if (value.includes('*')) {
    if (value.length !== 1) throw new InvalidInputError('eventTypes', "'*' stands alone in eventTypes");
    return Object.freeze(['*']);
  }
  return Object.freeze([...new Set(value.map((type) => validEventType('eventTypes', type)))]);
}

/**
 * An id of an endpoint or a delivery as a backend takes it: 1-200 characters of `A-Z a-z 0-9 _ : . -`;
 * anything else throws `InvalidInputError` naming `field`.
 *
 * @example
 * validWebhookId('id', 'whe_abc') // 'whe_abc'
 */
export function validWebhookId(field: string, value: unknown): string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_:.-]{1,200}$/.test(value)) {
    throw new InvalidInputError(field, `${field} must be an id, got ${quote(value)}`, { reason: 'unparseable' });
  }
  return value;
}

/**
 * A new endpoint from `input`, validated (an `InvalidInputError` naming the field, nothing made;
 * an internal `url` is refused unless the operator's `options.allowPrivateNetworks`), with its id
 * (`whe_…`) and a new secret. Every backend's `endpoints.create` calls it, with the options it was given.
 *
 * @example
 * const stored = newWebhookEndpoint({ accountId: 'acct_1', url: 'https://example.com/hooks' }, Date.now());
 */
export function newWebhookEndpoint(
  input: WebhookEndpointInput,
  nowMs: number,
  options?: WebhookEndpointOptions,
): StoredWebhookEndpoint {
  if (input === null || typeof input !== 'object') throw new InvalidInputError('input', 'create takes an object');
  // `allowPrivateNetworks` in here, say, is a mistake to name: it is the operator's, in `options`.
  checkOptionNames(input, INPUT_NAMES, 'a webhook endpoint');
  return Object.freeze({
    id: `whe_${randomBase62(20)}`,
    accountId: validAccountId(input.accountId),
    url: validWebhookUrl(input.url, options),
    eventTypes: validEventTypes(input.eventTypes ?? ['*']),
    enabled: true,
    createdAt: new Date(nowMs).toISOString(),
    disabledAt: null,
    secret: webhookSecret(),
  });
}

/**
 * `changes` checked: only `url`, `eventTypes`, `enabled`, at least one; an `InvalidInputError` naming
 * the field (a `url` as `validWebhookUrl` checks it, with `options`). Every backend's
 * `endpoints.update` calls it, with the options it was given.
 *
 * @example
 * validEndpointChanges({ enabled: true }) // { enabled: true }
 */
export function validEndpointChanges(
  changes: WebhookEndpointChanges,
  options?: WebhookEndpointOptions,
): WebhookEndpointChanges {
  validEndpointOptions(options);
  if (changes === null || typeof changes !== 'object') throw new InvalidInputError('changes', 'update takes an object');
  const out: WebhookEndpointChanges = {};
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (name === 'url') out.url = validWebhookUrl(value, options);
    else if (name === 'eventTypes') out.eventTypes = validEventTypes(value);
    else if (name === 'enabled') {
      if (typeof value !== 'boolean') throw new InvalidInputError('enabled', 'enabled must be true or false');
      out.enabled = value;
    } else throw new InvalidInputError(name, `${name} cannot be changed; url, eventTypes and enabled can`);
  }
  if (Object.keys(out).length === 0) throw new InvalidInputError('changes', 'update needs at least one change');
  return out;
}

/**
 * The public view of a stored endpoint: no secret.
 *
 * @example
 * endpointView(stored).secret // undefined
 */
export function endpointView(stored: StoredWebhookEndpoint): WebhookEndpoint {
  const { secret: _secret, ...view } = stored;
  return Object.freeze({ ...view, eventTypes: Object.freeze([...view.eventTypes]) });
}

/**
 * A lease token: 22 random base-62 characters.
 *
 * @example
 * leaseToken() // 'x8Qw…'
 */
export function leaseToken(): string {
  return randomBase62(22);
}

/**
 * The arguments of `claim` checked: `nowMs` finite, `leaseMs` > 0, `limit` 1-1,000 (default 20).
 *
 * @example
 * validClaimArgs({ nowMs: Date.now(), leaseMs: 30_000 }) // { nowMs, leaseMs: 30000, limit: 20 }
 */
export function validClaimArgs(args: { nowMs: number; leaseMs: number; limit?: number }): {
  nowMs: number;
  leaseMs: number;
  limit: number;
} {
  const nowMs = args?.nowMs;
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs))
    throw new InvalidInputError('nowMs', 'nowMs must be a time in epoch milliseconds');
  if (typeof args.leaseMs !== 'number' || !(args.leaseMs > 0) || !Number.isFinite(args.leaseMs)) {
    throw new InvalidInputError('leaseMs', 'leaseMs must be a number of milliseconds > 0');
  }
  const limit = validWholeNumber('limit', args.limit ?? 20, 1, 1_000);
  return { nowMs: Math.floor(nowMs), leaseMs: Math.ceil(args.leaseMs), limit };
}

/**
 * The limit of a delivery listing: 1-1,000, default 50.
 *
 * @example
 * validDeliveryLimit(undefined) // 50
 */
export function validDeliveryLimit(limit: unknown): number {
  return validWholeNumber('limit', limit ?? 50, 1, 1_000);
}

/**
 * A frozen delivery, as every backend returns it.
 *
 * @example
 * freezeDelivery({ ...delivery, attempts: delivery.attempts + 1 })
 */
export function freezeDelivery(delivery: WebhookDelivery): WebhookDelivery {
  return Object.freeze({ ...delivery });
}

/**
 * The ISO 8601 text of an epoch-milliseconds time, or null.
 *
 * @example
 * isoOrNull(0) // '1970-01-01T00:00:00.000Z'
 */
export function isoOrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}
