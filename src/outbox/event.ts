import { InvalidInputError } from '#errors';
import { scrubSecrets } from '../audit/entry.js';
import { auditId } from '../audit/id.js';
import { quote } from '../redact/describe.js';
import type { OutboxEvent } from '../types.js';
import { validAccountId } from '../validate/fields.js';
import type { OutboxEventInput } from '../vocabulary/outbox.js';

// The one place that decides what an outbox event may hold: every backend's `publish` and every
// event a KeyManager hands with a key write pass through `outboxEventOf`, so no backend stores a secret.

const EVENT_TYPE = /^[a-z][a-z0-9_]{0,39}(\.[a-z][a-z0-9_]{0,39}){1,3}$/;
const OWN_FIELDS = new Set(['id', 'type', 'accountId', 'at', 'data']);
// An event's data, serialised: ample for ids, a hint, a reason and a few numbers.
const MAX_DATA_JSON = 16_384;

/**
 * An event type: lower-case dotted words (`key.revoked`, `webhook.endpoint_disabled`); anything else
 * throws `InvalidInputError` naming `field`.
 *
 * @example
 * validEventType('type', 'key.created') // 'key.created'
 */
export function validEventType(field: string, value: unknown): string {
  if (typeof value !== 'string' || !EVENT_TYPE.test(value)) {
    throw new InvalidInputError(
      field,
      `${field} must be lower-case dotted words such as key.created, got ${quote(value)}`,
      {
        reason: 'unparseable',
      },
    );
  }
  return value;
}

/**
 * A new event id: `evt_` and 23 lower-case base-36 characters, ordered as strings by time (see `auditId`).
 *
 * @example
 * outboxEventId() // 'evt_mhc2xg8k10000k3j9x0c1qa'
 */
export function outboxEventId(nowMs: number = Date.now()): string {
  return `evt_${auditId(nowMs).slice(4)}`;
}

/**
 * The event the outbox stores for `input`: validated (`id`, `type`, `accountId`, `at`; an
 * `InvalidInputError` naming the field), with the input's `id` or a new one, and `data` (the input's `data`, plus every
 * field of a `KeygateEvent` other than `type`, `accountId` and `at`) scrubbed of secrets: a member
 * named like one (`hash`, `secret`, `digest`, ...) and a key- or digest-shaped value become `[redacted]`.
 *
 * @param nowMs the time for a missing `at` and for the id, epoch milliseconds. @default Date.now()
 * @example
 * outboxEventOf({ type: 'key.revoked', keyId: 'key_1', accountId: 'acct_1', hint: 'mk_live_…Xy9Z', at })
 */
export function outboxEventOf(input: OutboxEventInput | object, nowMs: number = Date.now()): OutboxEvent {
  if (input === null || typeof input !== 'object') throw new InvalidInputError('event', 'an event must be an object');
  const fields = input as Record<string, unknown>;
  const type = validEventType('type', fields.type);
  if (fields.accountId === null || fields.accountId === undefined) {
    throw new InvalidInputError('accountId', 'an outbox event belongs to an account; accountId is missing');
  }
  const accountId = validAccountId(fields.accountId);
  const at = fields.at === undefined ? new Date(nowMs).toISOString() : validAt(fields.at);
  const raw: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields))
    if (!OWN_FIELDS.has(name) && value !== undefined) raw[name] = value;
  if (fields.data !== undefined) {
    if (fields.data === null || typeof fields.data !== 'object' || Array.isArray(fields.data)) {
      throw new InvalidInputError('data', 'data must be an object');
    }
    Object.assign(raw, fields.data);
  }
  const data = scrubSecrets('data', raw) as Record<string, unknown>;
  if (JSON.stringify(data).length > MAX_DATA_JSON) {
    throw new InvalidInputError('data', `data must serialise to at most ${MAX_DATA_JSON} characters`, {
      reason: 'too_long',
    });
  }
  const id = fields.id === undefined ? outboxEventId(nowMs) : fields.id;
  if (typeof id !== 'string' || !/^evt_[a-z0-9]{23}$/.test(id)) {
    throw new InvalidInputError('id', `id must be an event id (evt_…), got ${quote(id)}`);
  }
  return Object.freeze({ id, type, accountId, at, data: Object.freeze(data) });
}

function validAt(value: unknown): string {
  const ms = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new InvalidInputError('at', `at must be an ISO 8601 date and time, got ${quote(value)}`, {
      reason: 'unparseable',
    });
  }
  return new Date(ms).toISOString();
}

/**
 * Whether an endpoint that takes `eventTypes` receives an event of `type`.
 *
 * @example
 * takesEvent(['*'], 'key.created') // true
 */
export function takesEvent(eventTypes: readonly string[], type: string): boolean {
  return eventTypes.includes('*') || eventTypes.includes(type);
}
