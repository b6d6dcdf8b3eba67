import type { KeyChange, KeyChangeEvent } from '../types.js';
import { ChangeFeed } from './change-feed.js';

const TYPES = new Set(['created', 'updated', 'revoked']);
const REMEMBERED = 1_000;

/**
 * The change a channel message (NOTIFY payload, pub/sub message) carries, or undefined when the
 * message is not one. Shared by every store with a cross-process channel.
 *
 * @example
 * parseChange('{"type":"revoked","id":"key_1","hash":"ab..","accountId":"a","version":3}')?.type // 'revoked'
 */
export function parseChange(payload: string): KeyChange | undefined {
  let v: Partial<KeyChange>;
  try {
    v = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object') return undefined;
  const { type, id, hash, accountId, version } = v;
  if (typeof type !== 'string' || !TYPES.has(type)) return undefined;
  if (typeof id !== 'string' || typeof hash !== 'string' || typeof accountId !== 'string') return undefined;
  if (typeof version !== 'number' || !Number.isInteger(version)) return undefined;
  return { type, id, hash, accountId, version };
}

/**
 * Delivers each change once to this process's listeners, whether it comes from a local write or
 * back through the channel: versions only grow, so `id` + `version` names a change. Remembers the
 * last 1,000 changes. A resync (the channel listens again after a gap) is always delivered.
 *
 * @example
 * const relay = new ChangeRelay();
 * relay.subscribe((c) => cache.invalidate(c));
 * relay.emit(change); relay.emit(change); // delivered once
 * relay.emit({ type: 'resync' }); // after the channel reconnected
 */
export class ChangeRelay {
  private readonly feed = new ChangeFeed();
  private readonly seen = new Set<string>();
  /** How many subscriptions are open; the store stops listening on the channel when none is. */
  listeners = 0;

  subscribe(listener: (change: KeyChangeEvent) => void): () => void {
    const off = this.feed.subscribe(listener);
    this.listeners++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.listeners--;
      off();
    };
  }

  emit(change: KeyChangeEvent): void {
    if (change.type === 'resync' || this.firstTime(change)) this.feed.emit(change);
  }

  private firstTime(change: KeyChange): boolean {
    const name = `${change.id}\u0000${change.version}`;
    if (this.seen.has(name)) return false;
    this.seen.add(name);
    // A Set iterates in insertion order, so the first entry is the oldest.
    if (this.seen.size > REMEMBERED) this.seen.delete(this.seen.values().next().value as string);
    return true;
  }
}
