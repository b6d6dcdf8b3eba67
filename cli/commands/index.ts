// The command table. Help, parsing and dispatch all read it; a new command is one entry here. A
// command's words may begin another's (`usage`, `usage prune`): the one with the most words that match wins.
import type { Command } from '../command.js';
import { AUDIT_COMMAND, AUDIT_PRUNE_COMMAND } from './audit.js';
import { CREDITS_COMMANDS } from './credits.js';
import { DASHBOARD_LINK_COMMAND } from './dashboard.js';
import { DOCTOR_COMMAND } from './doctor.js';
import { KEYS_COMMANDS } from './keys.js';
import { LEAKS_DRILL_COMMAND } from './leaks.js';
import { USAGE_COMMAND, USAGE_PRUNE_COMMAND } from './usage.js';
import { WEBHOOKS_COMMANDS } from './webhooks.js';

/** Every `keygate` command, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [
  ...KEYS_COMMANDS,
  USAGE_COMMAND,
  USAGE_PRUNE_COMMAND,
  AUDIT_COMMAND,
  AUDIT_PRUNE_COMMAND,
  ...CREDITS_COMMANDS,
  ...WEBHOOKS_COMMANDS,
  DASHBOARD_LINK_COMMAND,
  DOCTOR_COMMAND,
  LEAKS_DRILL_COMMAND,
];
