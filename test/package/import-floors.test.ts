// src/ stands on floors (docs/reference/development.md, "Layout"): every import runs down; the SQL
// backends stand on backends/sql/ and never on each other. Read from the sources' own import lines, so
// a new import that runs back up, or across to a sibling backend, fails here, naming its files.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');
// `#errors` is src/errors.ts (package.json `imports`); `#digest` a file of src/runtime.
const ALIASES: Record<string, string> = { '#errors': join(SRC, 'errors.ts'), '#digest': join(SRC, 'runtime') };
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'/g;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Each file under `root` (src/ unless named) and the files (or paths) it imports by relative path. */
function fileGraph(root = SRC): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(root)) {
    const targets: string[] = [];
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const specifier = (match[1] ?? match[2]) as string;
      if (specifier in ALIASES) targets.push(ALIASES[specifier] as string);
      else if (specifier.startsWith('.')) targets.push(resolve(dirname(file), specifier).replace(/\.js$/, '.ts'));
    }
    graph.set(file, targets);
  }
  return graph;
}

// A folder of src/ (`rate-limit`), or a file standing at its top (`errors.ts`).
const roomOf = (path: string) => relative(SRC, path).split('/')[0] as string;

/** The groups of nodes that reach each other (more than one node each): every circle, as its members. */
function circles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) visit(next);
      if (stack.includes(next)) low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const group = stack.splice(stack.indexOf(node));
    if (group.length > 1) found.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('the floors of src/', () => {
  const files = fileGraph();

  it('imports nothing outside src/ but packages (webhooks/, leaks/ and dashboard/ stand on it, not in it)', () => {
    const outside = [...files].flatMap(([file, targets]) =>
      targets.filter((t) => !t.startsWith(`${SRC}/`)).map((t) => `${relative(ROOT, file)} -> ${relative(ROOT, t)}`),
    );
    expect(outside).toEqual([]);
  });

  it('has no folder that imports another which imports it back, directly or through others', () => {
    const rooms = new Map<string, Set<string>>();
    for (const [file, targets] of files) {
      const from = roomOf(file);
      for (const target of targets) {
        const to = roomOf(target);
        if (to !== from) rooms.set(from, (rooms.get(from) ?? new Set()).add(to));
      }
    }
    expect(circles(rooms)).toEqual([]);
  });

  it('has no file that imports itself through others', () => {
    const graph = new Map(
      [...files].map(([file, targets]) => [relative(SRC, file), new Set(targets.map((t) => relative(SRC, t)))]),
    );
    expect(circles(graph)).toEqual([]);
  });
});

describe('the backends', () => {
  const BACKENDS = join(ROOT, 'backends');
  const files = fileGraph(BACKENDS);
  const backendOf = (path: string) => relative(BACKENDS, path).split('/')[0] as string;

  it('import their own files and the SQL core (backends/sql/), never a sibling backend or src/ by path (Drizzle, a layer over the SQL backends, may)', () => {
    const across = [...files]
      .filter(([file]) => backendOf(file) !== 'drizzle')
      .flatMap(([file, targets]) =>
        targets
          .filter((t) => {
            const to = relative(BACKENDS, t);
            return to.startsWith('..') || (backendOf(t) !== backendOf(file) && backendOf(t) !== 'sql');
          })
          .map((t) => `${relative(ROOT, file)} -> ${relative(ROOT, t)}`),
      );
    expect(across).toEqual([]);
  });

  it('leave the SQL core standing on nothing but packages', () => {
    const up = [...files]
      .filter(([file]) => backendOf(file) === 'sql')
      .flatMap(([file, targets]) =>
        targets.filter((t) => backendOf(t) !== 'sql').map((t) => `${relative(ROOT, file)} -> ${relative(ROOT, t)}`),
      );
    expect(up).toEqual([]);
  });

  it.each(['backends', 'testing', 'webhooks', 'leaks'])(
    '%s/ has no file that imports itself through others',
    (folder) => {
      const root = join(ROOT, folder);
      const graph = new Map(
        [...fileGraph(root)].map(([file, targets]) => [
          relative(root, file),
          new Set(targets.map((t) => relative(root, t))),
        ]),
      );
      expect(circles(graph)).toEqual([]);
    },
  );
});
