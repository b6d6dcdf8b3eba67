import type { Command, FlagSpec, Flags } from './command.js';
import { exitCodeLines } from './errors.js';
import { GLOBAL_FLAGS } from './parse.js';

/**
 * One command's usage line, from its table entry.
 *
 * @example
 * synopsis(revoke) // 'keygate keys revoke ID [--yes] [--quiet-for DURATION]'
 */
export function synopsis(command: Command): string {
  const args = command.args.map((name) => name.toUpperCase());
  const flags = Object.entries(command.flags).map(([name, spec]) => flagUsage(name, spec));
  return ['keygate', ...command.path, ...args, ...flags].join(' ');
}

function flagUsage(name: string, spec: FlagSpec): string {
  const word = spec.kind === 'boolean' ? `--${name}` : `--${name} ${placeholder(spec)}`;
  if (spec.required) return word;
  return spec.kind === 'strings' ? `[${word}]...` : `[${word}]`;
}

function placeholder(spec: FlagSpec): string {
  return spec.value ?? (spec.kind === 'duration' ? 'DURATION' : 'VALUE');
}

function flagLines(flags: Flags): string[] {
  const rows = Object.entries(flags).map(([name, spec]) => {
    const short = spec.short ? `-${spec.short}, ` : '';
    const value = spec.kind === 'boolean' ? '' : ` ${placeholder(spec)}`;
    return [`${short}--${name}${value}`, spec.example ? `${spec.help} (e.g. ${spec.example})` : spec.help] as const;
  });
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, help]) => `  ${left.padEnd(width)}  ${help}`);
}

const DURATIONS = 'Durations take a unit: 500ms, 30s, 15m, 12h, 90d.';

/**
 * The `--help` text: every command's usage line, the global flags and the exit codes; or, given a
 * command, its usage line and what each of its flags does.
 *
 * @example
 * io.out(helpText(COMMANDS)); io.out(helpText(COMMANDS, revoke));
 */
export function helpText(table: readonly Command[], command?: Command): string {
  if (command) {
    return [
      `${command.summary}\n\nUsage:\n  ${synopsis(command)}`,
      ...(command.details ? [command.details] : []),
      ...(Object.keys(command.flags).length ? [`Options:\n${flagLines(command.flags).join('\n')}`] : []),
      `Global options:\n${flagLines(GLOBAL_FLAGS).join('\n')}`,
      DURATIONS,
    ].join('\n\n');
  }
  return [
    'keygate: manage API keys and prepaid credits',
    `Usage:\n${table.map((c) => `  ${synopsis(c)}`).join('\n')}`,
    `Options:\n${flagLines(GLOBAL_FLAGS).join('\n')}`,
    DURATIONS,
    `Exit codes:\n${exitCodeLines().join('\n')}`,
    'Run keygate <command> --help for what each flag does.',
  ].join('\n\n');
}
