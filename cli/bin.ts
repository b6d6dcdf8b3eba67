#!/usr/bin/env node
// The `keygate` command. All logic lives in runCli, which tests drive in-process too.
import { createInterface } from 'node:readline/promises';
import { runCli } from './main.js';

const confirm = process.stdin.isTTY
  ? async (question: string) => {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return /^y(es)?$/i.test((await rl.question(question)).trim());
      } finally {
        rl.close();
      }
    }
  : undefined;

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  terminal: process.stdout.isTTY === true,
  ...(confirm ? { confirm } : {}),
});
