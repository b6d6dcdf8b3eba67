// A promise that must wait for something: still pending a turn of the event loop later, settled once
// `release` has run. The leased wrappers' idle() tests use it.
import { expect } from 'vitest';

/** Expects `promise` to be pending after one event-loop turn, then runs `release` and awaits `promise`. */
export async function expectPendingUntil(promise: Promise<unknown>, release: () => Promise<void>): Promise<void> {
  let settled = false;
  const watched = promise.then(() => {
    settled = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(settled).toBe(false);
  await release();
  await watched;
}
