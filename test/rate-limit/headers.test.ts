// The header fields' formatting, imported from the source (the adapters' responses are checked in test/frameworks).
import { describe, expect, it } from 'vitest';
import { rateLimitHeaders, retryAfterSeconds } from '../../src/rate-limit/headers.js';

describe('rate-limit header fields', () => {
  it.each([
    // limit, remaining, resetMs, windowMs -> RateLimit-Policy, RateLimit
    [100, 99, 60_000, 60_000, '"default";q=100;w=60', '"default";r=99;t=60'],
    [100, 0, 59_001, 60_000, '"default";q=100;w=60', '"default";r=0;t=60'],
    [100, 0, 59_000, 60_000, '"default";q=100;w=60', '"default";r=0;t=59'],
    [5, 2, 1, 1000, '"default";q=5;w=1', '"default";r=2;t=1'],
    [5, 2, 0, 1000, '"default";q=5;w=1', '"default";r=2;t=0'],
    [10, 10, 300, 300, '"default";q=10;w=1', '"default";r=10;t=1'],
    [10, 3, 1500, 1500, '"default";q=10;w=2', '"default";r=3;t=2'],
    [1000, 1, 86_400_000, 86_400_000, '"default";q=1000;w=86400', '"default";r=1;t=86400'],
  ])(
    'limit %i, remaining %i, reset in %i ms, window %i ms: %s / %s',
    (limit, remaining, resetMs, windowMs, policy, state) => {
      expect(rateLimitHeaders({ limit, remaining, resetMs, windowMs })).toEqual({
        'ratelimit-policy': policy,
        ratelimit: state,
      });
    },
  );

  it.each([
    [0, 1],
    [1, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [59_500, 60],
  ])('Retry-After for a reset in %i ms is %i s (rounded up, at least 1)', (resetMs, seconds) => {
    expect(retryAfterSeconds(resetMs)).toBe(seconds);
  });
});
