import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { RUN_ID } from './services.js';

// Cross-process tests run a child script in other Node processes against the same store. Plain node
// has no `source` condition and no TypeScript loader, so the child is bundled from the sources by
// esbuild; the bundle sits under node_modules/.cache so that its bare imports of the database clients
// (left external) resolve from the repository's node_modules.
const root = resolve(import.meta.dirname, '../../..');
const outDir = join(root, 'node_modules/.cache/keygate-children');
const EXTERNAL = [
  'pg',
  'redis',
  'ioredis',
  'mysql2',
  '@electric-sql/pglite',
  'lru-cache',
  'ipaddr.js',
  'better-sqlite3',
];

/** A bundled child script: where it is, and how to remove it. */
export interface ChildBundle {
  file: string;
  remove(): Promise<void>;
}

/**
 * Bundles the child script `entry` (a TypeScript file of the test suite) for plain `node`, and returns
 * the bundle's path and a function that removes it.
 *
 * @example
 * const bundle = await bundleChild(join(import.meta.dirname, 'support/consume-child.ts'));
 */
export async function bundleChild(entry: string): Promise<ChildBundle> {
  await mkdir(outDir, { recursive: true });
  const name = entry.replace(/^.*\//, '').replace(/\.ts$/, '');
  const file = join(outDir, `${name}-${RUN_ID}.mjs`);
  await build({
    entryPoints: [entry],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source', 'node'],
    external: EXTERNAL,
    logLevel: 'silent',
  });
  return { file, remove: () => rm(file, { force: true }) };
}

/** A running child that reports on stdout, one JSON object a line, each with an `event` name. */
export interface Child {
  /** The first event of that name, also one that came before the call; rejects if the child exits first. */
  next(event: string): Promise<Record<string, unknown>>;
  /** Writes one line to the child's stdin. */
  send(line: string): void;
  process: ChildProcess;
}

/**
 * Starts `node <file> <args as JSON>`; `cleanups` gets the function that kills it.
 *
 * @example
 * const c = startChild(bundle.file, { role: 'watch' }, cleanups);
 * await c.next('ready');
 */
export function startChild(file: string, args: Record<string, unknown>, cleanups: (() => Promise<unknown>)[]): Child {
  const proc = spawn(process.execPath, [file, JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'inherit'] });
  cleanups.push(async () => proc.kill());
  const waiting = new Map<string, (event: Record<string, unknown>) => void>();
  const seen = new Map<string, Record<string, unknown>>();
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    const event = JSON.parse(line) as Record<string, unknown>;
    const name = String(event.event);
    if (!seen.has(name)) seen.set(name, event);
    waiting.get(name)?.(event);
  });
  return {
    process: proc,
    send: (line) => proc.stdin!.write(`${line}\n`),
    next: (name) =>
      new Promise((resolveEvent, reject) => {
        const already = seen.get(name);
        if (already) return resolveEvent(already);
        waiting.set(name, resolveEvent);
        proc.once('exit', (code) => reject(new Error(`child exited (${code}) before "${name}"`)));
      }),
  };
}
