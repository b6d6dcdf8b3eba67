// Runs each working-set measurement in a child process of its own, so that its memory figure is its own.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'child.mjs');
let setFile;

/** Writes the working set (throwaway keys of the benchmark's own database) where children read it. */
export function shareWorkingSet(set) {
  const dir = mkdtempSync(join(tmpdir(), 'keygate-scale-'));
  setFile = join(dir, 'set.json');
  writeFileSync(setFile, JSON.stringify(set), { mode: 0o600 });
  return () => rmSync(dir, { recursive: true, force: true });
}

function child(args) {
  const out = execFileSync(process.execPath, ['--expose-gc', CHILD, setFile, ...args.map(String)], {
    maxBuffer: 1 << 24,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out.toString().trim().split('\n').at(-1));
}

/** A Zipf-distributed run through a CachedKeyStore of the given bound: hit ratio and memory at the bound. */
export function zipfRun(store, bound, setSize, requests) {
  return child(['zipf', store, bound, setSize, requests]);
}

/** authenticate() throughput, warm, over the store's cache against the in-memory store. */
export function throughput(store, setSize) {
  return child(['throughput', store, setSize]);
}
