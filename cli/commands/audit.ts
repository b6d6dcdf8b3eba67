// `keygate audit`: the audit log of an account's keys, newest first; `keygate audit prune`: the
// operator's retention of it.
import { capabilityOf, InvalidInputError, UnsupportedError } from 'keygate';
import { quote } from 'keygate/store-kit';
import { command } from '../command.js';
import { formatDuration } from '../duration.js';
import { formatAuditDetails, formatAuditTable } from '../format.js';
import { olderThan, prunedOutput } from './prune.js';

const WHOLE = /^[0-9]{1,4}$/;

/** `keygate audit --account A [--key ID] [--limit N] [--before ID] [--format table|details]`. */
export const AUDIT_COMMAND = command({
  path: ['audit'],
  args: [],
  summary: "Prints the audit log of an account's keys (who created, changed, rotated or revoked what), newest first.",
  flags: {
    account: { kind: 'string', value: 'A', required: true, help: 'the account whose log to print' },
    key: { kind: 'string', value: 'ID', help: "only this key's entries" },
    limit: { kind: 'string', value: 'N', help: 'at most N entries, 1 to 1000 (default 50)' },
    before: { kind: 'string', value: 'ENTRY', help: 'continue after this entry id (the last one printed)' },
    format: {
      kind: 'string',
      value: 'table|details',
      help: 'one line per entry, or every field of each (default: table on a terminal, else details)',
    },
  },
  async run({ flags, manager, terminal }) {
    const format = flags.format ?? (terminal ? 'table' : 'details');
    if (format !== 'table' && format !== 'details') {
      throw new InvalidInputError('--format', `--format takes table or details, got ${quote(format)}`);
    }
    if (flags.limit !== undefined && !WHOLE.test(flags.limit)) {
      throw new InvalidInputError('--limit', `--limit takes a whole number from 1 to 1000, got ${quote(flags.limit)}`);
    }
    const entries = await (await manager()).audit({
      accountId: flags.account,
      ...(flags.key !== undefined && { keyId: flags.key }),
      ...(flags.limit !== undefined && { limit: Number(flags.limit) }),
      ...(flags.before !== undefined && { before: flags.before }),
    });
    if (entries.length === 0) return { json: entries, text: flags.before ? 'no older entries' : 'no entries' };
    const limit = flags.limit === undefined ? 50 : Number(flags.limit);
    const last = entries.at(-1)?.id ?? '';
    const more = entries.length === limit ? `\n\nolder entries: --before ${last}` : '';
    const text = format === 'table' ? formatAuditTable(entries) : formatAuditDetails(entries);
    return { json: entries, text: text + more };
  },
});

/** `keygate audit prune --older-than DURATION [--yes]`. */
export const AUDIT_PRUNE_COMMAND = command({
  path: ['audit', 'prune'],
  args: [],
  summary:
    'Deletes the audit entries of every account older than --older-than: the retention you choose (nothing prunes the log by itself).',
  details:
    'Run it from a scheduler (cron, a systemd timer) to keep the log for a set time, e.g. daily with ' +
    '--older-than 400d. SQL stores record the cutoff first and refuse any other delete of a newer entry. ' +
    'Asks first on a terminal; elsewhere needs --yes.',
  flags: {
    'older-than': olderThan('400d'),
    yes: { kind: 'boolean', short: 'y', help: 'do not ask (needed without a terminal)' },
  },
  async run({ flags, manager, confirm }) {
    const olderThanMs = flags['older-than'];
    const log = capabilityOf((await manager()).store, 'audit');
    if (!log) throw new UnsupportedError('store', 'this store holds no audit log (no audit capability)');
    if (!flags.yes) {
      if (!confirm) {
        throw new InvalidInputError(
          '--yes',
          'audit prune deletes for good: pass --yes to confirm (no terminal to ask on)',
        );
      }
      const question = `Delete every audit entry older than ${formatDuration(olderThanMs)}, of every account? [y/N] `;
      if (!(await confirm(question))) throw new InvalidInputError('--yes', 'nothing deleted: not confirmed');
    }
    return prunedOutput(await log.prune({ olderThanMs }), olderThanMs, 'audit entries');
  },
});
