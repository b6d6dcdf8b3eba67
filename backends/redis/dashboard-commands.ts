import { dailyTotals } from 'keygate/store-kit';

// The key list's sparklines: counts added up per key and day, as every store answers them.
export { dailyTotals };

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
