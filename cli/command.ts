import type { AuditActor, CreditLedger, KeyManager } from 'keygate';

/**
 * How a flag reads its value: `string` (one value), `strings` (repeatable, a list), `boolean`, or
 * `duration` (a human duration such as `15m` or `90d`, handed to the command in milliseconds).
 */
export type FlagKind = 'string' | 'strings' | 'boolean' | 'duration';

/** One flag of a command, as the table declares it; parsing and help derive from it. */
export interface FlagSpec {
  readonly kind: FlagKind;
  /** What `--help` shows for the value (`CIDR`, `test|live`); defaults to the kind. */
  readonly value?: string;
  /** One line for `--help`. */
  readonly help: string;
  /** A `string` or `duration` flag the command cannot run without. */
  readonly required?: boolean;
  /** A one-letter alias (`y` for `-y`). */
  readonly short?: string;
  /** A typical value, shown in `--help` and in the error for a bad one (`15m`). */
  readonly example?: string;
}

/** Flags by name (without the leading `--`). */
export type Flags = Readonly<Record<string, FlagSpec>>;

/** What a handler receives for a flag of the given spec. */
export type FlagValue<S extends FlagSpec> = S['kind'] extends 'boolean'
  ? boolean
  : S['kind'] extends 'strings'
    ? string[]
    : S['kind'] extends 'duration'
      ? S extends { required: true }
        ? number
        : number | undefined
      : S extends { required: true }
        ? string
        : string | undefined;

/** What a handler receives for all its flags (a table-wide `Flags` reads as a plain record). */
export type FlagValues<F extends Flags> = string extends keyof F
  ? Record<string, unknown>
  : { -readonly [K in keyof F]: FlagValue<F[K]> };

/** What every command gets beside its own arguments and flags. */
export interface CommandContext {
  /** The manager over the store `--store` names, opened on first call and closed after the command. */
  manager(): Promise<KeyManager>;
  /** The credit ledger over the same store, opened on first call (and migrated) and closed with it. */
  ledger(): Promise<CreditLedger>;
  /** Asks a yes/no question on a terminal; undefined when there is none. */
  confirm: ((question: string) => Promise<boolean>) | undefined;
  /** Whether stdout is a terminal (a person reads it) rather than a pipe or a file (a script does). */
  terminal: boolean;
  /** Who runs the command, for the audit log of every change it makes: `{ type: 'cli', id: <user> }`. */
  actor: AuditActor;
  /** The environment the CLI runs in (`process.env` in the binary), for settings a command reads itself. */
  env: Readonly<Record<string, string | undefined>>;
  /** The store URL `manager()` opens: `--store`, else `KEYGATE_STORE`, else `pglite:./.keygate`. */
  storeUrl: string;
  /** The pepper `manager()` hashes with: `--pepper`, else `KEYGATE_PEPPER`; undefined when neither is set. */
  pepper: string | undefined;
}

/** What a command printed: `json` with `--json`, `text` otherwise. */
export interface CommandOutput {
  readonly json: unknown;
  readonly text: string;
  /** The exit code when the command ran but its answer is a failure (`credits reconcile` off). Default 0. */
  readonly exitCode?: number;
}

/** The parsed input of a command, typed from its table entry. */
export interface CommandInput<F extends Flags, A extends readonly string[]> extends CommandContext {
  /** Positional arguments by name. */
  readonly args: { readonly [K in A[number]]: string };
  readonly flags: FlagValues<F>;
}

/** One entry of the command table: everything about a command in one place. */
export interface Command<F extends Flags = Flags, A extends readonly string[] = readonly string[]> {
  /** The words that select it: `['keys', 'create']`. */
  readonly path: readonly string[];
  /** Positional arguments by name (`['id']`); exactly these many are accepted. */
  readonly args: A;
  readonly flags: F;
  /** One line for `--help`. */
  readonly summary: string;
  /** More for the command's own `--help`, after its usage line (where its data lives, what it exits with). */
  readonly details?: string;
  // A method, so that a command with specific flags fits the table's general type.
  run(input: CommandInput<F, A>): Promise<CommandOutput>;
}

/**
 * Declares a command, keeping its flag and argument types for the handler.
 *
 * @example
 * export const show = command({ path: ['keys', 'show'], args: ['id'], flags: {}, summary: 'Shows a key',
 *   async run({ args, manager }) { const key = await (await manager()).get(args.id); ... } });
 */
export function command<const F extends Flags, const A extends readonly string[]>(spec: Command<F, A>): Command {
  return spec;
}
