import { InvalidInputError } from '#errors';
import type { KeyManager, ManagedKey } from '../src/manager/key-manager.js';
import type { OutboxEvent } from '../src/types.js';
import { checkOptionNames } from '../src/validate/options.js';
import type { Outbox } from '../src/vocabulary/outbox.js';
import { repeating } from './repeat.js';
import { stableEventId } from './stable-id.js';

const DAY_MS = 86_400_000;
const OPTION_NAMES = ['manager', 'outbox', 'accounts', 'clock', 'expiringDays', 'publishWithinMs'] as const;

/**
 * Options of {@link keyNotifications}.
 *
 * @example
 * const options: KeyNotificationsOptions = { manager: keys, outbox, accounts: () => db.accountIds() };
 */
export interface KeyNotificationsOptions {
  /** Lists the keys (`list(accountId)`) and says which are due for rotation (its `rotationDays`). */
  manager: Pick<KeyManager, 'list' | 'rotationDays'>;
  /** Where the notifications go: a store's `outbox` capability. */
  outbox: Outbox;
  /**
   * The accounts to sweep. Key stores list keys one account at a time, so the host, who knows its
   * accounts, names them.
   */
  accounts: () => Promise<readonly string[]> | readonly string[];
  /** Now, in epoch milliseconds; give the manager's clock too. @default Date.now */
  clock?: () => number;
  /** How many days before a key's `expiresAt` `key.expiring` is sent, once for each. @default [7, 1] */
  expiringDays?: readonly number[];
  /**
   * How long after an event became due (its `at`) a sweep still publishes it, in milliseconds: a
   * sweep that missed it (a service down, a key overdue when sweeps began) catches up within this,
   * and never after. The outbox remembers an event's id, and so publishes it once, only while it
   * keeps the event, at least `retainMs` after its `at` (the dispatcher's, 7 days by default): keep
   * this no longer than that, or a pruned event would be published and sent again. @default 604_800_000 (7 days)
   */
  publishWithinMs?: number;
}

/**
 * What one {@link KeyNotifications.runOnce} did.
 *
 * @example
 * const { keys, events } = await notifications.runOnce();
 */
export interface KeyNotificationsReport {
  /** Active keys looked at. */
  readonly keys: number;
  /**
   * The events due (within `publishWithinMs` of their `at`), as the outbox holds them (stored by this
   * run or an earlier one, in any process).
   */
  readonly events: readonly OutboxEvent[];
}

/**
 * A sweep of keys for the notifications no key write raises. See {@link keyNotifications}.
 *
 * @example
 * const notifications = keyNotifications({ manager: keys, outbox, accounts });
 * notifications.start({ intervalMs: 3_600_000 });
 */
export interface KeyNotifications {
  /** Looks at every active key of every account once and publishes what is due. */
  runOnce(): Promise<KeyNotificationsReport>;
  /** Runs `runOnce` every `intervalMs` (default 3,600,000: an hour) on an unref'd timer, until `stop`. */
  start(options?: { intervalMs?: number; onError?: (err: unknown) => void }): void;
  /** Stops the loop and waits for the run under way. */
  stop(): Promise<void>;
}

/**
 * A sweep that publishes to the outbox, **once each** however often it runs and in however many
 * processes (each event's id comes from {@link stableEventId}: the key, the kind, the expiry):
 *
 * - `key.expiring`, data `{ keyId, hint, expiresAt, daysLeft }`, when an active key is within
 *   `daysLeft` days (each of `expiringDays`, default 7 and 1) of its `expiresAt`; only the nearest
 *   window, so a key made with 6 days left gets the 7-day one, and the 1-day one later. A new
 *   `expiresAt` starts over.
 * - `key.rotation_due`, data `{ keyId, hint, createdAt, rotationDays }`, once an active key is
 *   `rotationDays` old (the manager's; its view's `rotationDue`).
 *
 * Each event's `at` is when it became due, not when the sweep saw it. A sweep publishes an event only
 * within `publishWithinMs` (7 days) of its `at`: an event due earlier is never sent (see there).
 *
 * @example
 * const notifications = keyNotifications({ manager: keys, outbox: capabilityOf(store, 'outbox')!, accounts: async () => ['acct_1'] });
 * await notifications.runOnce(); // from a cron, or:
 * notifications.start({ intervalMs: 3_600_000 });
 */
export function keyNotifications(options: KeyNotificationsOptions): KeyNotifications {
  checkOptionNames(options, OPTION_NAMES, 'keyNotifications');
  const { manager, outbox, accounts } = options ?? ({} as KeyNotificationsOptions);
  if (typeof manager?.list !== 'function') throw new InvalidInputError('manager', 'manager must be a KeyManager');
  if (typeof outbox?.publish !== 'function') throw new InvalidInputError('outbox', 'outbox must be an Outbox');
  if (typeof accounts !== 'function') throw new InvalidInputError('accounts', 'accounts must be a function');
  const clock = options.clock ?? Date.now;
  const publishWithinMs = options.publishWithinMs ?? 7 * DAY_MS;
  if (typeof publishWithinMs !== 'number' || !Number.isSafeInteger(publishWithinMs) || publishWithinMs < 1) {
    throw new InvalidInputError('publishWithinMs', 'publishWithinMs must be a whole number of milliseconds >= 1');
  }
  const windows = [...(options.expiringDays ?? [7, 1])].sort((a, b) => a - b);
  for (const days of windows) {
    if (typeof days !== 'number' || !(days > 0) || !Number.isFinite(days)) {
      throw new InvalidInputError('expiringDays', 'expiringDays must be numbers of days > 0');
    }
  }

  // Publishes the event (or finds the one stored), or skips it when it became due too long ago: its
  // first publication may have been pruned since, and publishing it again would send it again.
  async function publish(
    key: ManagedKey,
    type: string,
    dedupe: string,
    atMs: number,
    nowMs: number,
    data: object,
  ): Promise<OutboxEvent | undefined> {
    if (nowMs - atMs >= publishWithinMs) return undefined;
    const at = new Date(atMs).toISOString();
    const id = stableEventId(`${type}:${key.id}:${dedupe}`, atMs);
    return outbox.publish({ id, type, accountId: key.accountId, at, data: { keyId: key.id, hint: key.hint, ...data } });
  }

  async function sweepKey(key: ManagedKey, nowMs: number, out: OutboxEvent[]): Promise<void> {
    const createdMs = Date.parse(key.createdAt);
    if (key.expiresAt !== null) {
      const expiresMs = Date.parse(key.expiresAt);
      const daysLeft = windows.find((days) => expiresMs - nowMs <= days * DAY_MS);
      if (expiresMs > nowMs && daysLeft !== undefined) {
        const dueMs = Math.max(expiresMs - daysLeft * DAY_MS, createdMs);
        const data = { expiresAt: key.expiresAt, daysLeft };
        const event = await publish(key, 'key.expiring', `${key.expiresAt}:${daysLeft}`, dueMs, nowMs, data);
        if (event) out.push(event);
      }
    }
    if (key.rotationDue) {
      const { rotationDays } = manager;
      const dueMs = createdMs + rotationDays * DAY_MS;
      const data = { createdAt: key.createdAt, rotationDays };
      const event = await publish(key, 'key.rotation_due', key.createdAt, dueMs, nowMs, data);
      if (event) out.push(event);
    }
  }

  async function runOnce(): Promise<KeyNotificationsReport> {
    const nowMs = clock();
    const events: OutboxEvent[] = [];
    let keys = 0;
    for (const accountId of await accounts()) {
      for (const key of await manager.list(accountId)) {
        if (key.status !== 'active') continue;
        keys++;
        await sweepKey(key, nowMs, events);
      }
    }
    return { keys, events };
  }

  return { runOnce, ...repeating(runOnce, 3_600_000) };
}
