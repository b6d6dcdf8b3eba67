// The `keygate keys ...` commands: one table entry each (words, arguments, flags, help, handler).
import {
  type CreatedKey,
  InvalidInputError,
  KeyManager,
  KeyNotFoundError,
  MemoryKeyStore,
  type UpdateKeyInput,
} from 'keygate';
import { quote } from 'keygate/store-kit';
import { type Command, type CommandOutput, command, type FlagValues } from '../command.js';
import { formatDuration } from '../duration.js';
import { formatKey, formatKeyTable, formatRotationStatus } from '../format.js';
import { parseRateLimit } from '../rate-limit.js';

// Flags more than one command takes, declared once.
const account = { kind: 'string', value: 'A', required: true, help: 'the account the keys belong to' } as const;
const permission = { kind: 'strings', value: 'P', help: 'a permission the key holds (repeat for more)' } as const;
const allow = {
  kind: 'strings',
  value: 'CIDR',
  help: 'an address or range the key may be used from (repeat)',
} as const;
const rateLimit = {
  kind: 'string',
  value: 'N/DURATION',
  example: '100/1m',
  help: "at most N requests per DURATION, or several named limits NAME=N/DURATION,... that all apply, counted when the service has a rate limiter (default: the service's default)",
} as const;
const quietFor = {
  kind: 'duration',
  example: '15m',
  help: 'how long the old key must have gone unused (default 15m)',
} as const;

function secretOutput(verb: string, created: CreatedKey): CommandOutput {
  return {
    json: created,
    text:
      `${verb} ${created.key.id} (${created.key.hint})\n${formatKey(created.key)}\n\n` +
      `SECRET (shown once, store it now; keygate keeps only its digest):\n${created.secret}\n`,
  };
}

const create = command({
  path: ['keys', 'create'],
  args: [],
  summary: 'Creates a key and prints its secret, once.',
  flags: {
    account,
    name: { kind: 'string', value: 'N', required: true, help: 'a name to tell the key by' },
    mode: { kind: 'string', value: 'test|live', required: true, help: 'test (sandbox, never billed) or live' },
    permission,
    allow,
    expires: { kind: 'string', value: 'ISO', help: 'when the key stops working (ISO 8601; default never)' },
    'rate-limit': rateLimit,
  },
  async run({ flags, manager, actor }) {
    const limit = flags['rate-limit'] === undefined ? null : parseRateLimit('rate-limit', flags['rate-limit']);
    const input = {
      accountId: flags.account,
      name: flags.name,
      mode: flags.mode as 'live' | 'test',
      permissions: flags.permission,
      allowedIps: flags.allow,
      expiresAt: flags.expires ?? null,
      rateLimit: limit,
    };
    // Checked before the store opens, so a refused key creates nothing, not even the store's folder:
    // the same create over an empty memory store throws the refusal the real one would.
    if (!KeyManager.check(input).ok) await new KeyManager({ store: new MemoryKeyStore() }).create(input, { actor });
    const created = await (await manager()).create(input, { actor });
    return secretOutput('Created', created);
  },
});

const list = command({
  path: ['keys', 'list'],
  args: [],
  summary: "Lists an account's keys, revoked ones included, oldest first.",
  flags: {
    account,
    'unused-for': { kind: 'duration', example: '90d', help: 'only active keys with no traffic for this long' },
    format: {
      kind: 'string',
      value: 'table|details',
      help: 'one line per key, or every field of each key (default: table on a terminal, else details)',
    },
  },
  async run({ flags, manager, terminal }) {
    const format = flags.format ?? (terminal ? 'table' : 'details');
    if (format !== 'table' && format !== 'details') {
      throw new InvalidInputError('--format', `--format takes table or details, got ${quote(format)}`);
    }
    const keys = await manager();
    const unusedMs = flags['unused-for'];
    // A duration flag arrives in milliseconds, the unit `unusedForMs` takes.
    const found = await keys.list(flags.account, unusedMs === undefined ? {} : { unusedForMs: unusedMs });
    if (found.length === 0) return { json: found, text: 'no keys' };
    if (format === 'details') return { json: found, text: found.map(formatKey).join('\n\n') };
    // The last use of each key, as `keygate usage` reports it (a one-day report: its counts are not needed).
    const today = new Date().toISOString().slice(0, 10);
    const lastUsed = new Map<string, string | null>();
    for (const key of found) lastUsed.set(key.id, (await keys.usage(key.id, { from: today, to: today })).lastUsedAt);
    return { json: found, text: formatKeyTable(found, lastUsed) };
  },
});

const show = command({
  path: ['keys', 'show'],
  args: ['id'],
  summary: 'Shows one key (never its secret).',
  flags: {},
  async run({ args, manager }) {
    const key = await (await manager()).get(args.id);
    if (!key) throw new KeyNotFoundError(args.id);
    return { json: key, text: formatKey(key) };
  },
});

const updateFlags = {
  name: { kind: 'string', value: 'N', help: 'a new name' },
  permission: { ...permission, help: 'the permissions the key holds from now on (repeat; replaces them)' },
  allow: { ...allow, help: 'the allow list from now on (repeat; replaces it)' },
  'clear-allow': { kind: 'boolean', help: 'empty the allow list: any address may use the key' },
  expires: { kind: 'string', value: 'ISO|never', help: 'a new expiry, or never' },
  'rate-limit': {
    ...rateLimit,
    value: 'N/DURATION|NAME=N/DURATION,...|default',
    help: "a new rate limit (or named limits, replacing all), or default to remove its own (the service's default applies)",
  },
} as const;

const update = command({
  path: ['keys', 'update'],
  args: ['id'],
  summary: "Changes a key's name, permissions, allow list, expiry or rate limit.",
  flags: updateFlags,
  async run({ args, flags, manager, actor }) {
    const changes = updateInput(flags);
    const key = await (await manager()).update(args.id, changes, { actor });
    return { json: key, text: `Updated ${key.id}\n${formatKey(key)}` };
  },
});

function updateInput(flags: FlagValues<typeof updateFlags>): UpdateKeyInput {
  if (flags['clear-allow'] && flags.allow.length) {
    throw new InvalidInputError('--clear-allow', 'use either --allow or --clear-allow');
  }
  const changes: UpdateKeyInput = {};
  if (flags.name !== undefined) changes.name = flags.name;
  if (flags.permission.length) changes.permissions = flags.permission;
  if (flags.allow.length || flags['clear-allow']) changes.allowedIps = flags.allow;
  if (flags.expires !== undefined) changes.expiresAt = flags.expires === 'never' ? null : flags.expires;
  if (flags['rate-limit'] !== undefined) changes.rateLimit = parseRateLimit('rate-limit', flags['rate-limit']);
  if (Object.keys(changes).length === 0) {
    throw new InvalidInputError(
      'arguments',
      'update needs --name, --permission, --allow, --clear-allow, --expires or --rate-limit',
    );
  }
  return changes;
}

const rotate = command({
  path: ['keys', 'rotate'],
  args: ['id'],
  summary:
    'Creates the successor of a key (same account, mode, permissions, allow list); both work until you revoke, or until --grace ends.',
  flags: {
    grace: {
      kind: 'duration',
      example: '24h',
      help: 'the old key stops working after this long (0: at once; default: when you revoke it)',
    },
  },
  async run({ args, flags, manager }) {
    const graceMs = flags.grace;
    const created = await (await manager()).rotate(args.id, graceMs === undefined ? {} : { graceMs });
    const output = secretOutput('Rotated to', created);
    if (graceMs === undefined) return output;
    const ends = graceMs === 0 ? 'stopped working now' : `stops working in ${formatDuration(graceMs)}`;
    return { ...output, text: `${output.text}\nThe old key ${args.id} ${ends}.\n` };
  },
});

const suspend = command({
  path: ['keys', 'suspend'],
  args: ['id'],
  summary: 'Suspends a key: refused (403 key_suspended) until resumed. Suspending a suspended key changes nothing.',
  flags: { reason: { kind: 'string', value: 'R', help: 'why, shown with the key (at most 500 characters)' } },
  async run({ args, flags, manager }) {
    const key = await (await manager()).suspend(args.id, flags.reason === undefined ? {} : { reason: flags.reason });
    return { json: key, text: `Suspended ${key.id} (${key.hint}) at ${key.suspendedAt}\n${formatKey(key)}` };
  },
});

const resume = command({
  path: ['keys', 'resume'],
  args: ['id'],
  summary: 'Ends a suspension: the key works again. Resuming an active key changes nothing.',
  flags: {},
  async run({ args, manager }) {
    const key = await (await manager()).resume(args.id);
    return { json: key, text: `Active ${key.id} (${key.hint})\n${formatKey(key)}` };
  },
});

const rotationStatus = command({
  path: ['keys', 'rotation-status'],
  args: ['id'],
  summary: 'Tells where a rotation stands: is the new key used, has the old one gone quiet?',
  flags: { 'quiet-for': quietFor },
  async run({ args, flags, manager }) {
    const quietMs = flags['quiet-for'];
    const status = await (await manager()).rotationStatus(
      args.id,
      quietMs === undefined ? {} : { quietForMs: quietMs },
    );
    return { json: status, text: formatRotationStatus(status) };
  },
});

const revoke = command({
  path: ['keys', 'revoke'],
  args: ['id'],
  summary: 'Revokes a key, permanently. Asks first on a terminal; elsewhere needs --yes.',
  flags: {
    yes: { kind: 'boolean', short: 'y', help: 'do not ask (needed without a terminal)' },
    'quiet-for': { ...quietFor, help: 'revoke only if the key has gone unused this long' },
  },
  async run({ args, flags, manager, confirm, actor }) {
    const keys = await manager();
    const key = await keys.get(args.id);
    if (!key) throw new KeyNotFoundError(args.id);
    if (!flags.yes) {
      if (!confirm)
        throw new InvalidInputError('--yes', 'revoke is permanent: pass --yes to confirm (no terminal to ask on)');
      const ok = await confirm(`Revoke ${key.id} (${key.hint}, "${key.name}")? This is permanent. [y/N] `);
      if (!ok) throw new InvalidInputError('--yes', 'not revoked: not confirmed');
    }
    const quietMs = flags['quiet-for'];
    const revoked = await keys.revoke(args.id, quietMs === undefined ? { actor } : { quietForMs: quietMs, actor });
    const text = `Revoked ${revoked.id} (${revoked.hint}) at ${revoked.revokedAt}`;
    return {
      json: revoked,
      text: quietMs === undefined ? text : `${text}, quiet for ${formatDuration(quietMs)} or more`,
    };
  },
});

/** The `keys` group, in the order `--help` lists it. */
export const KEYS_COMMANDS: readonly Command[] = [
  create,
  list,
  show,
  update,
  rotate,
  rotationStatus,
  suspend,
  resume,
  revoke,
];
