import { type AuditActor, type CreditLedger, KeyManager } from 'keygate';
import { cliActor } from './actor.js';
import { COMMANDS } from './commands/index.js';
import { reportError } from './errors.js';
import { helpText } from './help.js';
import { DEFAULT_STORE, type OpenedStore, openStore } from './open-store.js';
import { parseCommandLine } from './parse.js';

/** What the CLI talks to; `process` in the real binary, fakes in tests. */
export interface CliIo {
  env: Record<string, string | undefined>;
  out(text: string): void;
  err(text: string): void;
  /** Asks a yes/no question on a terminal; undefined when there is no terminal to ask on. */
  confirm?: (question: string) => Promise<boolean>;
  /** Whether `out` writes to a terminal: human-sized views by default. @default false */
  terminal?: boolean;
  /** Who runs it, as the audit log records changes. @default `{ type: 'cli', id: <the OS user name> }` */
  actor?: AuditActor;
}

/**
 * Runs one CLI invocation and returns its exit code: 0 on success; on failure one line on stderr (one
 * JSON value with `--json`) and the code `EXIT_CODES` gives the error's `code`. Nothing is written
 * when a command fails.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), { env: process.env, out: ..., err: ... });
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  // Known before parsing, so that a parse error is reported the way the caller asked.
  const json = argv.includes('--json');
  const store = new LazyStore();
  try {
    const call = parseCommandLine(argv, COMMANDS);
    if (call.kind === 'help') {
      io.out(helpText(COMMANDS, call.command));
      return 0;
    }
    const pepper = call.global.pepper ?? io.env.KEYGATE_PEPPER;
    const url = call.global.store ?? io.env.KEYGATE_STORE ?? DEFAULT_STORE;
    const output = await call.command.run({
      args: call.args,
      flags: call.flags,
      manager: () => store.manager(url, pepper),
      ledger: () => store.ledger(url),
      confirm: io.confirm,
      terminal: io.terminal ?? false,
      actor: io.actor ?? cliActor(io.env),
      env: io.env,
      storeUrl: url,
      pepper,
    });
    io.out(json ? JSON.stringify(output.json, null, 2) : output.text);
    return output.exitCode ?? 0;
  } catch (err) {
    return reportError(err, { json, err: io.err });
  } finally {
    await store.close();
  }
}

// Opens the store on a command's first call, so that help and argument errors never touch it.
class LazyStore {
  private opened: Promise<OpenedStore> | undefined;

  async manager(url: string, pepper: string | undefined): Promise<KeyManager> {
    const { store } = await this.open(url);
    return new KeyManager({ store, ...(pepper ? { pepper } : {}) });
  }

  async ledger(url: string): Promise<CreditLedger> {
    return (await this.open(url)).ledger();
  }

  private open(url: string): Promise<OpenedStore> {
    this.opened ??= openStore(url);
    return this.opened;
  }

  async close(): Promise<void> {
    const opened = await this.opened?.catch(() => undefined);
    await opened?.close().catch(() => {});
  }
}
