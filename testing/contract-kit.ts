import type { ContractTestApi } from './contract-types.js';

// What every contract suite of keygate/testing is built from. Internal: nothing here is exported.

/** The host runner's `expect`. */
export type Expect = ContractTestApi['expect'];

/** One case of a suite: its title, what it does with the suite's context, and its timeout in milliseconds. */
export type Case<C> = readonly [title: string, run: (c: C) => Promise<void>, timeoutMs?: number];

/** What a call rejected with (its `code` and `cause` when it has them). */
export type Failure = { code?: unknown; cause?: unknown } | undefined;

/** What `promise` rejects with; the resolved value when it does not (which then fails the match). */
export async function rejection(promise: Promise<unknown>): Promise<Failure> {
  try {
    return (await promise) as Failure;
  } catch (err) {
    return err as Failure;
  }
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** This run's own prefix (8 characters): shared backends need no cleaning between tests, nor between runs. */
export const RUN = Math.random().toString(36).slice(2, 10).padEnd(8, '0');
let made = 0;

/** A name no other test or run uses, as `${kind}_${label}_${RUN}_${n}` (`acct_topup_...`, `key_burst_...`). */
export const fresh = (kind: string, label: string) => `${kind}_${label}_${RUN}_${++made}`;

/**
 * Reads with `read` until `done` holds of the answer or the clock passes `deadlineMs` (a `Date.now()`
 * time), every `everyMs`, and answers the last read: real time is waited for by polling, never by timing.
 */
export async function poll<T>(read: () => Promise<T>, done: (v: T) => boolean, deadlineMs: number, everyMs = 50) {
  let value = await read();
  while (!done(value) && Date.now() < deadlineMs) {
    await sleep(everyMs);
    value = await read();
  }
  return value;
}

/** The hook `name` of a fixture whose suite's options name it; a fixture without it is a setup error. */
export function need<H, K extends keyof H & string>(hooks: H, name: K): NonNullable<H[K]> {
  const hook = hooks[name];
  if (!hook) throw new Error(`options.hooks names ${name}, so every fixture must have it`);
  return hook as NonNullable<H[K]>;
}

// How late past its deadline a stalled call may settle on a loaded machine, in milliseconds.
const DEADLINE_SLACK_MS = 1_000;

/**
 * Checks that `call`, made over a backend that never answers with a timeout of 50 ms, rejects with
 * `code` at that deadline (not before, not much after), then fails what it waited on through `unstick`
 * as a connection reset would: that late failure must be absorbed (no unhandled rejection).
 */
export async function expectsTimeout(
  expect: Expect,
  code: string,
  call: () => Promise<unknown>,
  unstick: (err: Error) => void,
): Promise<void> {
  const startedMs = Date.now();
  let settled = false;
  const outcome = rejection(call()).finally(() => {
    settled = true;
  });
  await sleep(25);
  expect(settled).toBe(false);
  const err = await outcome;
  const elapsedMs = Date.now() - startedMs;
  expect(err).toMatchObject({ code });
  expect(/timed out after 50 ms/.test(String((err?.cause as Error | undefined)?.message))).toBe(true);
  expect(elapsedMs).toBeGreaterThan(48);
  expect(elapsedMs).toBeLessThanOrEqual(50 + DEADLINE_SLACK_MS);
  unstick(new Error('connection reset'));
  await sleep(20);
}

/** Checks that `call` rejects with `code`, the client's error as its cause (a closed or ended client). */
export async function expectsUnavailable(expect: Expect, code: string, call: () => Promise<unknown>): Promise<void> {
  const err = await rejection(call());
  expect(err).toMatchObject({ code });
  expect(err?.cause).toBeInstanceOf(Error);
}

/**
 * Registers `cases` in a `describe` of `title`, each run with the context `contextOf` makes of a
 * fresh fixture from `factory`, and closes that fixture after each.
 */
export function describeCases<F extends { close?(): Promise<void> }, C>(
  t: ContractTestApi,
  title: string,
  factory: () => Promise<F>,
  contextOf: (fixture: F) => C,
  cases: ReadonlyArray<Case<C>>,
): void {
  let fixture: F;
  let context: C;
  t.describe(title, () => {
    t.beforeEach(async () => {
      fixture = await factory();
      context = contextOf(fixture);
    });
    t.afterEach(async () => {
      await fixture.close?.();
    });
    for (const [name, run, timeoutMs] of cases) t.it(name, () => run(context), timeoutMs);
  });
}
