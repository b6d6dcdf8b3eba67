#!/usr/bin/env node
// `npm run test:matrix`: the same case table (cases.mjs) on Node 20, 22 and 24, Bun, Deno and workerd,
// each runtime's answers compared with Node 20's; and through keygate/elysia on Bun (elysia.mjs), a
// real socket, compared with Node 20's keygate/fetch. Two builds of keygate are exercised:
//   web      one esbuild bundle of the dist for the web (no `node` condition: `#digest` is the Web
//            Crypto module), the same file on every runtime, and the worker script on workerd;
//   package  the dist loaded as an installed package (the `node` condition: `#digest` is node:crypto),
//            on every runtime that has a package resolver (all but workerd).
// Needs `npm run build` and `npm ci --prefix test/matrix/runtimes`. Exits 1 on any difference.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

const here = import.meta.dirname;
const root = resolve(here, '../..');
const bins = join(here, 'runtimes', 'node_modules');
const exec = promisify(execFile);

const RUNTIMES = [
  { name: 'node20', command: [process.execPath] },
  { name: 'node22', command: [join(bins, 'node22', 'bin', 'node')] },
  { name: 'node24', command: [join(bins, 'node24', 'bin', 'node')] },
  { name: 'bun', command: [join(bins, '.bin', 'bun')] },
  // No permissions: the case script reads no file, no env and opens no socket.
  { name: 'deno', command: [join(bins, '.bin', 'deno'), 'run', '--no-prompt'], packageArgs: ['--allow-read'] },
];

if (!process.version.startsWith('v20.')) throw new Error(`run the matrix with Node 20 (got ${process.version})`);
if (!existsSync(join(root, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
for (const { name, command } of RUNTIMES) {
  if (!existsSync(command[0])) {
    throw new Error(`${name} not found at ${command[0]}: run \`npm ci --prefix test/matrix/runtimes\``);
  }
}

/** Bundles `entry` the way a Workers or browser build would, resolving keygate to its dist. */
async function bundleForTheWeb(entry) {
  const result = await build({
    entryPoints: [join(here, entry)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    conditions: ['worker', 'browser'],
    mainFields: ['module', 'main'],
    target: 'es2022',
    logLevel: 'silent',
  });
  const text = result.outputFiles[0]?.text ?? '';
  // The web build must carry the Web Crypto digest and nothing from Node.
  if (/from ["']node:/.test(text)) throw new Error(`${entry}: the web bundle imports a node: module`);
  return text;
}

async function runScript(runtime, script, extraArgs = []) {
  const [bin, ...args] = runtime.command;
  const { stdout } = await exec(bin, [...args, ...extraArgs, script], { cwd: root, timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

async function onWorkerd(script) {
  const mf = new Miniflare({ modules: true, script, compatibilityDate: '2024-09-23' });
  try {
    return await (await mf.dispatchFetch('http://matrix.test/')).json();
  } finally {
    await mf.dispose();
  }
}

/** Problems with one run's answers on their own: wrong status or code, or bytes not the shared ones. */
function selfCheck(results) {
  const problems = [];
  for (const r of results) {
    if (r.expect === 200) {
      if (!r.core.ok || r.core.status !== 200 || r.fetch.status !== 200) problems.push(`${r.name}: not allowed`);
    } else if (r.core.code !== r.expect || r.fetch.sameBytesAsResponder !== true) {
      problems.push(`${r.name}: core ${r.core.status} ${r.core.code}, fetch ${r.fetch.status}, want ${r.expect}`);
    }
  }
  return problems;
}

/** The first case whose answer differs from Node 20's, or undefined when all are identical. */
function difference(results, reference) {
  if (reference === undefined) return 'DIFFERS: node20 failed';
  if (results.length !== reference.length) return `DIFFERS: ${results.length} cases, node20 ${reference.length}`;
  for (const [i, r] of results.entries()) {
    for (const part of ['core', 'fetch']) {
      if (!isDeepStrictEqual(r[part], reference[i][part])) {
        return `DIFFERS from node20 in "${r.name}" (${part}): ${JSON.stringify(r[part])}`;
      }
    }
  }
  return undefined;
}

const work = mkdtempSync(join(tmpdir(), 'keygate-matrix-'));
const rows = [];
try {
  const webMain = join(work, 'main.web.mjs');
  writeFileSync(webMain, await bundleForTheWeb('main.mjs'));
  const webWorker = await bundleForTheWeb('worker.mjs');

  const jobs = [];
  for (const runtime of RUNTIMES) {
    jobs.push({ runtime: runtime.name, build: 'web', run: () => runScript(runtime, webMain) });
    jobs.push({
      runtime: runtime.name,
      build: 'package',
      run: async () => {
        const resolved = await runScript(runtime, join(here, 'resolve.mjs'), runtime.packageArgs);
        if (!resolved.digest.endsWith('/dist/runtime/node-digest.js') || !resolved.keygate.endsWith('/dist/index.js')) {
          throw new Error(`resolved keygate to ${resolved.keygate} and #digest to ${resolved.digest}`);
        }
        return runScript(runtime, join(here, 'main.mjs'), runtime.packageArgs);
      },
    });
  }
  jobs.push({ runtime: 'workerd', build: 'web', run: () => onWorkerd(webWorker) });
  // keygate/elysia from the dist on Bun, over a real socket (Elysia resolves from the root's node_modules).
  const bun = RUNTIMES.find((runtime) => runtime.name === 'bun');
  jobs.push({ runtime: 'bun', build: 'elysia', run: () => runScript(bun, join(here, 'elysia.mjs')) });

  // Two at a time: the machine has two cores and each runtime starts in well under a second.
  const settled = [];
  for (let i = 0; i < jobs.length; i += 2) {
    settled.push(...(await Promise.allSettled(jobs.slice(i, i + 2).map((job) => job.run()))));
  }
  const reference = settled[0].status === 'fulfilled' ? settled[0].value : undefined;
  jobs.forEach((job, i) => {
    const outcome = settled[i];
    if (outcome.status === 'rejected') {
      rows.push({
        ...job,
        cases: 0,
        verdict: `FAILED: ${String(outcome.reason?.message ?? outcome.reason).split('\n')[0]}`,
      });
      return;
    }
    const problems = selfCheck(outcome.value);
    const verdict =
      problems.length > 0
        ? `WRONG: ${problems.join('; ')}`
        : (difference(outcome.value, reference) ?? 'ok, identical to node20');
    rows.push({ ...job, cases: outcome.value.length, verdict });
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}

for (const { runtime, build, cases, verdict } of rows) {
  console.log(`${runtime.padEnd(8)} ${build.padEnd(8)} ${String(cases).padStart(2)} cases  ${verdict}`);
}
if (rows.some((row) => !row.verdict.startsWith('ok'))) process.exitCode = 1;
