// What each entry point exports, read with the TypeScript checker from the sources the `source`
// export condition names (as the docs build reads them): names, value or type, and their JSDoc.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '../../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { source: string }>;
};

/** Every entry point of package.json `exports`: its import name and its source file. */
export const ENTRIES = Object.entries(pkg.exports).flatMap(([subpath, target]) =>
  typeof target === 'object' ? [[`keygate${subpath.slice(1)}`, join(ROOT, target.source)] as const] : [],
);

/** One export of an entry point. */
export interface EntryExport {
  name: string;
  kind: 'value' | 'type';
  described: boolean;
  example: boolean;
}

let checked: { program: ts.Program; checker: ts.TypeChecker } | undefined;

function compile() {
  if (checked) return checked;
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
  checked = { program, checker: program.getTypeChecker() };
  return checked;
}

/** The exports of the entry point named `entry` (`keygate`, `keygate/store-kit`, ...). */
export function exportsOf(entry: string): EntryExport[] {
  const file = ENTRIES.find(([name]) => name === entry)?.[1];
  if (!file) throw new Error(`package.json exports no ${entry}`);
  const { program, checker } = compile();
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
