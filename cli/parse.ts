import { parseArgs } from 'node:util';
import { InvalidInputError } from 'keygate';
import { closestName } from 'keygate/store-kit';
import type { Command, FlagSpec, Flags } from './command.js';
import { parseDuration } from './duration.js';
import { DEFAULT_STORE } from './open-store.js';

/** Flags every command takes. */
export const GLOBAL_FLAGS = {
  store: {
    kind: 'string',
    value: 'URL',
    help:
      'pglite:<dir>, sqlite:<file>, postgres://…[?schema=S], mysql://… or mariadb://…[?prefix=P], or ' +
      `redis://…[?prefix=P] (default: KEYGATE_STORE, else ${DEFAULT_STORE})`,
  },
  pepper: {
    kind: 'string',
    value: 'S',
    help: "server-side pepper (default: KEYGATE_PEPPER); must match the service's",
  },
  json: { kind: 'boolean', help: 'print one JSON value (errors too, on stderr)' },
  help: { kind: 'boolean', short: 'h', help: "this text, or a command's own after the command" },
} as const satisfies Flags;

/** A command line, understood. */
export type Invocation =
  | { readonly kind: 'help'; readonly command: Command | undefined }
  | {
      readonly kind: 'run';
      readonly command: Command;
      readonly args: Record<string, string>;
      readonly flags: Record<string, unknown>;
      readonly global: { store: string | undefined; pepper: string | undefined };
    };

/**
 * Reads `argv` against the command table: finds the command by its words, then checks and converts its
 * arguments and flags (durations to milliseconds, lists defaulting to empty).
 *
 * @throws InvalidInputError naming the flag or argument at fault (`--account`, `command`, `id`).
 * @example
 * parseCommandLine(['keys', 'show', 'key_1'], COMMANDS) // { kind: 'run', command: show, args: { id: 'key_1' }, ... }
 */
export function parseCommandLine(argv: readonly string[], table: readonly Command[]): Invocation {
  const { values, positionals } = readArgs(argv, table);
  const command = findCommand(positionals, table);
  if (values.help === true) return { kind: 'help', command };
  if (!command) throw unknownCommand(positionals, table);
  checkFlagsBelong(command, values);
  return {
    kind: 'run',
    command,
    args: readPositionals(command, positionals.slice(command.path.length)),
    flags: readFlags(command.flags, values),
    global: {
      store: values.store as string | undefined,
      pepper: values.pepper as string | undefined,
    },
  };
}

// One strict pass over every flag any command knows (a flag name has one kind across the table);
// which of them this command takes is checked next.
function readArgs(argv: readonly string[], table: readonly Command[]) {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const flags of [GLOBAL_FLAGS, ...table.map((c) => c.flags)]) {
    for (const [name, spec] of Object.entries(flags)) options[name] = parseArgsOption(spec);
  }
  try {
    return parseArgs({ args: negativeValuesJoined(argv, options), options, allowPositionals: true, strict: true });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
      throw unknownFlag(err, argv, options, table);
    throw parseError(err);
  }
}

// `--amount -5` reads as the flag's value, not as a flag -5: a negative number after a flag that takes
// a value is joined to it (`--amount=-5`), so the command's own check says what is wrong with it.
function negativeValuesJoined(
  argv: readonly string[],
  options: Record<string, { type: 'string' | 'boolean' }>,
): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    const takesValue = arg.startsWith('--') && options[arg.slice(2)]?.type === 'string';
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

// An unknown flag, with the nearest one the command takes (every command's, when the words name none).
function unknownFlag(
  err: unknown,
  argv: readonly string[],
  options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>,
  table: readonly Command[],
): InvalidInputError {
  const flag = /'(-{1,2}[^'=\s]+)/.exec((err as Error).message)?.[1];
  if (flag === undefined || !flag.startsWith('--')) return parseError(err);
  const { positionals } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false });
  const command = findCommand(positionals, table);
  const flags = command ? [command.flags] : table.map((c) => c.flags);
  const known = [...new Set([GLOBAL_FLAGS, ...flags].flatMap((f) => Object.keys(f)))];
  return new InvalidInputError(flag, unknownFlagMessage(flag, known, command));
}

function unknownFlagMessage(flag: string, known: readonly string[], command: Command | undefined): string {
  const near = closestName(flag.slice(2), known);
  const where = command ? `keygate ${command.path.join(' ')}` : 'keygate';
  const hint = near === undefined ? `see ${where} --help` : `did you mean --${near}?`;
  return `${command ? `${command.path.join(' ')} has` : 'there is'} no option ${flag}; ${hint}`;
}

function parseArgsOption(spec: FlagSpec): { type: 'string' | 'boolean'; multiple?: boolean; short?: string } {
  const short = spec.short ? { short: spec.short } : {};
  if (spec.kind === 'boolean') return { type: 'boolean', ...short };
  return spec.kind === 'strings' ? { type: 'string', multiple: true, ...short } : { type: 'string', ...short };
}

function parseError(err: unknown): InvalidInputError {
  const message = (err as Error).message.split('\n')[0] ?? 'bad arguments';
  const flag = /'(-{1,2}[\w-]+)/.exec(message)?.[1] ?? 'arguments';
  return new InvalidInputError(flag, message.replace(/\. To specify a positional.*$/, ''));
}

// The command whose words the positionals start with; the longest such (`usage prune` over `usage`).
function findCommand(positionals: readonly string[], table: readonly Command[]): Command | undefined {
  let found: Command | undefined;
  for (const c of table) {
    if (c.path.every((word, i) => positionals[i] === word) && c.path.length > (found?.path.length ?? 0)) found = c;
  }
  return found;
}

function unknownCommand(positionals: readonly string[], table: readonly Command[]): InvalidInputError {
  if (positionals.length === 0) return new InvalidInputError('command', 'no command given; see keygate --help');
  const group = table.filter((c) => c.path.length > 1 && c.path[0] === positionals[0]).map((c) => c.path[1]);
  if (group.length === 0) {
    return new InvalidInputError('command', `unknown command ${JSON.stringify(positionals[0])}; see keygate --help`);
  }
  const what = positionals.length === 1 ? 'needs a command' : `has no command ${JSON.stringify(positionals[1])}`;
  return new InvalidInputError('command', `${positionals[0]} ${what}; it takes ${group.join(', ')}`);
}

function checkFlagsBelong(command: Command, values: Record<string, unknown>): void {
  for (const name of Object.keys(values)) {
    if (name in GLOBAL_FLAGS || name in command.flags) continue;
    throw new InvalidInputError(
      `--${name}`,
      `${command.path.join(' ')} does not take --${name}; see keygate ${command.path.join(' ')} --help`,
    );
  }
}

function readPositionals(command: Command, given: readonly string[]): Record<string, string> {
  const names = command.args;
  if (given.length !== names.length) {
    const wanted = names.length === 0 ? 'no arguments' : `exactly ${names.map((n) => n.toUpperCase()).join(' ')}`;
    throw new InvalidInputError(names[0] ?? 'arguments', `${command.path.join(' ')} takes ${wanted}`);
  }
  return Object.fromEntries(names.map((name, i) => [name, given[i] as string]));
}

function readFlags(flags: Flags, values: Record<string, unknown>): Record<string, unknown> {
  const read: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(flags)) {
    const value = values[name];
    if (spec.kind === 'boolean') read[name] = value === true;
    else if (spec.kind === 'strings') read[name] = value ?? [];
    else if (value === undefined || (spec.required && value === '')) {
      if (spec.required) throw new InvalidInputError(`--${name}`, `--${name} is required`);
      read[name] = undefined;
    } else read[name] = spec.kind === 'duration' ? parseDuration(name, value as string, spec.example) : value;
  }
  return read;
}
