import { InvalidInputError } from '#errors';

// Event ids derived from an idempotency key, so that an event published by several sweeps, in several
// processes, is stored once: every outbox skips an id it already holds (`OutboxEventInput.id`).

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

// 53 well-mixed bits of `text` (cyrb53): not a secret's hash, only a name's; two seeds give 106 bits,
// of which the id keeps 72, ample for telling apart the events of a deployment's keys.
function mix53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

function base36(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = ALPHABET[rest % 36] + out;
    rest = Math.floor(rest / 36);
  }
  return out;
}

/**
 * The event id (`evt_` and 23 lower-case base-36 characters, like every outbox event id) that the
 * idempotency key `key` and the time `atMs` always give: 9 characters of the time (so ids still sort
 * by time) and 14 of a hash of the key. Publish with it (`outbox.publish({ id, at, ... })`, `at` being
 * the same time) and the event is stored once, however many processes publish it, however often.
 *
 * @param key what makes the event one event, e.g. `key.expiring:<keyId>:<expiresAt>:7`; 1-500 characters
 * @param atMs when the event happened, epoch milliseconds; the same for every publisher
 * @example
 * const id = stableEventId(`key.rotation_due:${key.id}`, dueMs);
 * await outbox.publish({ id, type: 'key.rotation_due', accountId, at: new Date(dueMs).toISOString(), data: { keyId: key.id } });
 */
export function stableEventId(key: string, atMs: number): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 500) {
    throw new InvalidInputError('key', 'key must be a string of 1 to 500 characters');
  }
  if (typeof atMs !== 'number' || !Number.isFinite(atMs) || atMs < 0) {
    throw new InvalidInputError('atMs', 'atMs must be a time in epoch milliseconds');
  }
  return `evt_${base36(Math.floor(atMs), 9)}${base36(mix53(key, 1), 7)}${base36(mix53(key, 2), 7)}`;
}
