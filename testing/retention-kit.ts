import type { PruneResult } from 'keygate';
import { type Expect, rejection } from './contract-kit.js';

// What the retention cases of every contract share (docs/guide/retention.md): rows written with times
// in 2001, a cutoff between them, and the arguments every `prune` refuses.

/** A time in 2001, far older than anything the other cases write. */
export const OLD = Date.UTC(2001, 0, 1);

/** The `olderThanMs` whose cutoff is `cutoffMs` at the time of the call (the call's own clock moves on by a few ms). */
export const olderThan = (cutoffMs: number) => Date.now() - cutoffMs;

/** Arguments every `prune` refuses: the field the `invalid_input` error names, what the case is, and the arguments. */
export const BAD_PRUNE_ARGS: ReadonlyArray<readonly [field: string, title: string, args: unknown]> = [
  ['olderThanMs', 'no arguments', undefined],
  ['olderThanMs', 'no olderThanMs', {}],
  ['olderThanMs', 'a negative olderThanMs', { olderThanMs: -1 }],
  ['olderThanMs', 'a NaN olderThanMs', { olderThanMs: Number.NaN }],
  ['olderThanMs', 'an infinite olderThanMs', { olderThanMs: Number.POSITIVE_INFINITY }],
  ['olderThanMs', 'a duration as text', { olderThanMs: '7d' }],
  ['olderThan', 'a member it does not take', { olderThan: 1_000 }],
];

/**
 * Checks that `prune` refuses each of {@link BAD_PRUNE_ARGS} as `invalid_input` naming the field, and
 * that `unchanged` (a read of what an errant prune would delete) answers the same after them all.
 */
export async function refusesBadPruneArgs(
  expect: Expect,
  prune: (args: unknown) => Promise<PruneResult>,
  unchanged: () => Promise<unknown>,
): Promise<void> {
  const before = await unchanged();
  for (const [field, , args] of BAD_PRUNE_ARGS) {
    expect(await rejection(prune(args))).toMatchObject({ code: 'invalid_input', field });
  }
  expect(await unchanged()).toEqual(before);
}
