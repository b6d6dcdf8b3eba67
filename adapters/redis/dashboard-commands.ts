import type { UsageCount } from 'keygate/store-kit';

// What RedisKeyStore answers for the dashboard (keygate/dashboard): used tokens and the key list's
// daily totals.

/** The part of a node-redis client the used-token record needs. */
interface CommandClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * Records a single-use token (a dashboard sign-in link) under `<prefix>used-token:<id>` until
 * `expiresAt`: `SET NX` with an expiry, so of two concurrent calls exactly one gets true, and the
 * record disappears once the token could no longer verify anyway.
 */
export async function markTokenUsed(
  client: CommandClient,
  prefix: string,
  tokenId: string,
  expiresAt: string,
): Promise<boolean> {
  const ttl = Math.max(1, Date.parse(expiresAt) - Date.now());
  const reply = await client.sendCommand(['SET', `${prefix}used-token:${tokenId}`, '1', 'NX', 'PX', String(ttl)]);
  return reply === 'OK';
}

/** True when `tokenId` is recorded (and so unexpired). */
export async function isTokenUsed(client: CommandClient, prefix: string, tokenId: string): Promise<boolean> {
  return Number(await client.sendCommand(['EXISTS', `${prefix}used-token:${tokenId}`])) === 1;
}

/** Counts added up per key and day, every outcome together (the key list's sparklines). */
export function dailyTotals(counts: readonly UsageCount[]): Array<{ keyId: string; day: string; total: number }> {
  const totals = new Map<string, { keyId: string; day: string; total: number }>();
  for (const c of counts) {
    const slot = `${c.keyId}\u0000${c.day}`;
    const entry = totals.get(slot) ?? { keyId: c.keyId, day: c.day, total: 0 };
    entry.total += c.count;
    totals.set(slot, entry);
  }
  return [...totals.values()];
}
