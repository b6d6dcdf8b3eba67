// The API reference (`npm run docs`, TypeDoc) is generated from JSDoc, so every export must carry
// it: a description on everything, and an @example on every function, class and constant. Reads
// each entry point's sources through the `source` export condition, as the docs build does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { source: string }>;
};
const ENTRIES = Object.entries(pkg.exports).flatMap(([subpath, target]) =>
  typeof target === 'object' ? [[`keygate${subpath.slice(1)}`, join(ROOT, target.source)] as const] : [],
);

const config = ts.getParsedCommandLineOfConfigFile(
  join(ROOT, 'tsconfig.node.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  },
);
const program = ts.createProgram(
  ENTRIES.map(([, file]) => file),
  config?.options ?? {},
);
const checker = program.getTypeChecker();

interface ExportDocs {
  name: string;
  kind: 'value' | 'type';
  described: boolean;
  example: boolean;
}

function exportsOf(file: string): ExportDocs[] {
  const source = program.getSourceFile(file);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`cannot read the exports of ${file}`);
  return checker.getExportsOfModule(module).map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    return {
      name: exported.name,
      kind: symbol.flags & ts.SymbolFlags.Value ? 'value' : 'type',
      described: ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim() !== '',
      example: symbol.getJsDocTags(checker).some((tag) => tag.name === 'example'),
    };
  });
}

describe.each(ENTRIES)('%s', (_, file) => {
  const docs = exportsOf(file);

  it('exports something', () => {
    expect(docs.length).toBeGreaterThan(0);
  });

  it('describes every export in JSDoc', () => {
    expect(docs.filter((d) => !d.described).map((d) => d.name)).toEqual([]);
  });

  it('gives every function, class and constant an @example', () => {
    expect(docs.filter((d) => d.kind === 'value' && !d.example).map((d) => d.name)).toEqual([]);
  });
});
