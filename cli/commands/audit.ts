// `keygate audit`: the audit log of an account's keys, newest first.
import { InvalidInputError } from 'keygate';
import { quote } from 'keygate/store-kit';
import { command } from '../command.js';
import { formatAuditDetails, formatAuditTable } from '../format.js';

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
