import { parseArgs } from 'node:util';
import { KeygateError, KeyManager, type ManagedKey, type UpdateKeyInput } from 'keygate';
import { formatKey, formatRotationStatus, formatUsage } from './format.js';
import { DEFAULT_STORE, type OpenedStore, openStore } from './open-store.js';

/** What the CLI talks to; `process` in the real binary, fakes in tests. */
export interface CliIo {
  env: Record<string, string | undefined>;
  out(text: string): void;
  err(text: string): void;
  /** Asks a yes/no question on a terminal; undefined when there is no terminal to ask on. */
  confirm?: (question: string) => Promise<boolean>;
}

/** A mistake in how the CLI was called; printed as one line, exit code 1. */
class UsageError extends Error {}

export const HELP = `keygate: manage API keys

Usage:
  keygate keys create --account A --name N --mode test|live [--permission P]... [--allow CIDR]... [--expires ISO]
  keygate keys list --account A [--unused-for DAYS]
  keygate keys show ID
  keygate keys update ID [--name N] [--permission P]... [--allow CIDR]... [--clear-allow] [--expires ISO|never]
  keygate keys rotate ID
  keygate keys rotation-status ID [--quiet-for MINUTES]
  keygate keys revoke ID [--yes] [--if-quiet-for MINUTES]
  keygate usage ID [--from YYYY-MM-DD] [--to YYYY-MM-DD]

Options:
  --store URL   pglite:<dir>, postgres://... or redis://... (default: KEYGATE_STORE, else ${DEFAULT_STORE})
  --pepper S    server-side pepper (default: KEYGATE_PEPPER); must match the service's
  --json        print one JSON value
  -h, --help    this text
`;

const OPTIONS = {
  store: { type: 'string' },
  pepper: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  yes: { type: 'boolean', short: 'y' },
  account: { type: 'string' },
  name: { type: 'string' },
  mode: { type: 'string' },
  permission: { type: 'string', multiple: true },
  allow: { type: 'string', multiple: true },
  'clear-allow': { type: 'boolean' },
  expires: { type: 'string' },
  'unused-for': { type: 'string' },
  'quiet-for': { type: 'string' },
  'if-quiet-for': { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function number(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`--${flag} must be a number >= 0, got ${JSON.stringify(value)}`);
  return n;
}

function required(flag: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

function onlyId(positionals: string[], command: string): string {
  if (positionals.length !== 1) throw new UsageError(`${command} takes exactly one key id`);
  return positionals[0] as string;
}

/**
 * Runs one CLI invocation and returns its exit code: 0 on success, 1 on any error (one line on
 * stderr; nothing written to the store).
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), { env: process.env, out: ..., err: ... });
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let opened: OpenedStore | undefined;
  try {
    let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
    try {
      parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message.split('\n')[0] ?? 'bad arguments');
    }
    const { values, positionals } = parsed;
    if (values.help || positionals.length === 0) {
      io.out(HELP);
      return values.help ? 0 : 1;
    }
    const [group, ...rest] = positionals;
    const command = group === 'keys' ? rest.shift() : group === 'usage' ? 'usage' : undefined;
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(positionals.join(' '))}; see keygate --help`);
    const known = ['create', 'list', 'show', 'update', 'rotate', 'rotation-status', 'revoke', 'usage'];
    if (!known.includes(command)) throw new UsageError(`unknown command "keys ${command}"; see keygate --help`);

    opened = await openStore(values.store ?? io.env.KEYGATE_STORE ?? DEFAULT_STORE);
    const pepper = values.pepper ?? io.env.KEYGATE_PEPPER;
    const keys = new KeyManager({ store: opened.store, ...(pepper ? { pepper } : {}) });
    await execute(command, rest, values, keys, io);
    return 0;
  } catch (err) {
    const message =
      err instanceof KeygateError || err instanceof UsageError ? err.message : `${(err as Error)?.message ?? err}`;
    io.err(`keygate: ${message}`);
    return 1;
  } finally {
    await opened?.close().catch(() => {});
  }
}

async function execute(command: string, args: string[], values: Values, keys: KeyManager, io: CliIo): Promise<void> {
  const print = (json: unknown, human: string) => io.out(values.json ? JSON.stringify(json, null, 2) : human);
  const printSecret = (verb: string, created: { secret: string; key: ManagedKey }) =>
    print(
      created,
      `${verb} ${created.key.id} (${created.key.hint})\n${formatKey(created.key)}\n\n` +
        `SECRET (shown once, store it now; keygate keeps only its digest):\n${created.secret}\n`,
    );

  switch (command) {
    case 'create': {
      if (args.length) throw new UsageError('create takes no positional arguments');
      const created = await keys.create({
        accountId: required('account', values.account),
        name: required('name', values.name),
        mode: required('mode', values.mode) as 'live' | 'test',
        permissions: values.permission ?? [],
        allowedIps: values.allow ?? [],
        expiresAt: values.expires ?? null,
      });
      return printSecret('Created', created);
    }
    case 'list': {
      if (args.length) throw new UsageError('list takes no positional arguments; use --account');
      const unusedFor = number('unused-for', values['unused-for']);
      const list = await keys.list(
        required('account', values.account),
        unusedFor === undefined ? {} : { unusedForMs: unusedFor * 86_400_000 },
      );
      return print(list, list.length ? list.map(formatKey).join('\n\n') : 'no keys');
    }
    case 'show': {
      const id = onlyId(args, 'show');
      const key = await keys.get(id);
      if (!key) throw new UsageError(`no key with id ${JSON.stringify(id)}`);
      return print(key, formatKey(key));
    }
    case 'update': {
      const id = onlyId(args, 'update');
      const changes: UpdateKeyInput = {};
      if (values.name !== undefined) changes.name = values.name;
      if (values.permission) changes.permissions = values.permission;
      if (values['clear-allow'] && values.allow) throw new UsageError('use either --allow or --clear-allow');
      if (values.allow) changes.allowedIps = values.allow;
      if (values['clear-allow']) changes.allowedIps = [];
      if (values.expires !== undefined) changes.expiresAt = values.expires === 'never' ? null : values.expires;
      if (Object.keys(changes).length === 0) {
        throw new UsageError('update needs --name, --permission, --allow, --clear-allow or --expires');
      }
      const key = await keys.update(id, changes);
      return print(key, `Updated ${key.id}\n${formatKey(key)}`);
    }
    case 'rotate': {
      const created = await keys.rotate(onlyId(args, 'rotate'));
      return printSecret('Rotated to', created);
    }
    case 'rotation-status': {
      const minutes = number('quiet-for', values['quiet-for']);
      const status = await keys.rotationStatus(
        onlyId(args, 'rotation-status'),
        minutes === undefined ? {} : { quietForMs: minutes * 60_000 },
      );
      return print(status, formatRotationStatus(status));
    }
    case 'revoke': {
      const id = onlyId(args, 'revoke');
      const key = await keys.get(id);
      if (!key) throw new UsageError(`no key with id ${JSON.stringify(id)}`);
      if (!values.yes) {
        if (!io.confirm) throw new UsageError('revoke is permanent: pass --yes to confirm (no terminal to ask on)');
        const ok = await io.confirm(`Revoke ${key.id} (${key.hint}, "${key.name}")? This is permanent. [y/N] `);
        if (!ok) throw new UsageError('not revoked');
      }
      const minutes = number('if-quiet-for', values['if-quiet-for']);
      const revoked = await keys.revoke(id, minutes === undefined ? {} : { quietForMs: minutes * 60_000 });
      return print(revoked, `Revoked ${revoked.id} (${revoked.hint}) at ${revoked.revokedAt}`);
    }
    case 'usage': {
      const id = onlyId(args, 'usage');
      const report = await keys.usage(id, {
        ...(values.from ? { from: values.from } : {}),
        ...(values.to ? { to: values.to } : {}),
      });
      return print(report, formatUsage(report));
    }
  }
}
