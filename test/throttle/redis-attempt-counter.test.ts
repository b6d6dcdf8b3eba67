import { RedisAttemptCounter } from 'keygate/redis';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

// The counter sits on the request path (every failed or reserved attempt): each call must be one short
// EVALSHA, not the whole script sent again, and must survive the server forgetting its scripts.
describe('RedisAttemptCounter scripts', async () => {
  const up = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
  const client = up ? await createClient({ url: REDIS_URL }).connect() : undefined;
  afterAll(async () => {
    // The counters' keys expire by themselves; a test still removes what it wrote.
    for await (const keys of client?.scanIterator({ MATCH: `keygate-test:${RUN_ID}:*` }) ?? []) {
      if (keys.length) await client?.del(keys);
    }
    client?.destroy();
  });

  it.runIf(up)('sends each script once, then one EVALSHA per call', async () => {
    const sent: string[] = [];
    const counting = {
      sendCommand: (args: string[]) => {
        sent.push(args[0] === 'SCRIPT' ? `SCRIPT ${args[1]}` : (args[0] as string));
        return (client as NonNullable<typeof client>).sendCommand(args);
      },
    };
    const counter = new RedisAttemptCounter({ client: counting, prefix: `keygate-test:${RUN_ID}:sha:` });
    await counter.increment('a', 30_000); // SCRIPT LOAD, then EVALSHA
    sent.length = 0;
    for (let i = 0; i < 5; i++) await counter.increment('a', 30_000);
    expect(sent).toEqual(Array(5).fill('EVALSHA'));
    expect(await counter.get('a')).toMatchObject({ count: 6 });
    const reservation = await counter.reserve('a', 10, 30_000);
    expect(reservation).toMatchObject({ granted: true, count: 6 });
    await reservation.settle(true);
    expect(await counter.get('a')).toMatchObject({ count: 7 });
    expect(sent).not.toContain('EVAL');
  });

  it.runIf(up)('reloads its scripts after the server forgot them (SCRIPT FLUSH)', async () => {
    const counter = new RedisAttemptCounter({ client: client as never, prefix: `keygate-test:${RUN_ID}:flush:` });
    expect(await counter.increment('b', 30_000)).toMatchObject({ count: 1 });
    await client?.sendCommand(['SCRIPT', 'FLUSH']);
    expect(await counter.increment('b', 30_000)).toMatchObject({ count: 2 });
  });
});
