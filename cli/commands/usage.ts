// `keygate usage ID`: a key's traffic per day; `keygate usage prune`: the counts of days long gone.
import { capabilityOf, UnsupportedError } from 'keygate';
import { command } from '../command.js';
import { formatUsage } from '../format.js';
import { olderThan, prunedOutput } from './prune.js';

/** `keygate usage ID [--from DATE] [--to DATE]`. */
export const USAGE_COMMAND = command({
  path: ['usage'],
  args: ['id'],
  summary: "Prints a key's requests per day (allowed, denied and why), with totals.",
  flags: {
    from: { kind: 'string', value: 'YYYY-MM-DD', help: 'first day (UTC; default 29 days before --to)' },
    to: { kind: 'string', value: 'YYYY-MM-DD', help: 'last day (UTC; default today)' },
  },
  async run({ args, flags, manager }) {
    const report = await (await manager()).usage(args.id, {
      ...(flags.from ? { from: flags.from } : {}),
      ...(flags.to ? { to: flags.to } : {}),
    });
    return { json: report, text: formatUsage(report) };
  },
});

/** `keygate usage prune --older-than DURATION`. */
export const USAGE_PRUNE_COMMAND = command({
  path: ['usage', 'prune'],
  args: [],
  summary: 'Deletes the usage counts, of every key, of the UTC days that ended longer ago than --older-than.',
  details:
    'A UsageRecorder does this once a day by itself (its retainMs, 400 days by default); this is for a ' +
    "store no recorder prunes, or a shorter retention now. Each key's last use stays.",
  flags: { 'older-than': olderThan('400d') },
  async run({ flags, manager }) {
    const olderThanMs = flags['older-than'];
    const usage = capabilityOf((await manager()).store, 'usage');
    if (!usage) throw new UnsupportedError('store', 'this store keeps no usage (no usage capability)');
    return prunedOutput(await usage.prune({ olderThanMs }), olderThanMs, 'usage counts');
  },
});
