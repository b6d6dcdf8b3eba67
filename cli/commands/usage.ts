// `keygate usage ID`: a key's traffic per day.
import { command } from '../command.js';
import { formatUsage } from '../format.js';

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
