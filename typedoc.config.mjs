// TypeDoc's configuration (`npm run docs:api`). Its entry points are package.json's `exports`, each
// read from its `source` condition (scripts/entry-points.mjs), so a new subpath is documented without
// an edit here; scripts/typedoc-entry-names.mjs names each module by the import a user writes.
import { entryPoints } from './scripts/entry-points.mjs';

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: 'keygate',
  entryPoints: entryPoints().map((entry) => entry.source),
  tsconfig: 'tsconfig.node.json',
  out: 'docs/public/api',
  readme: 'none',
  excludePrivate: true,
  excludeInternal: true,
  sort: ['kind', 'alphabetical'],
  validation: { notExported: true, invalidLink: true, notDocumented: true },
  requiredToBeDocumented: ['Enum', 'Variable', 'Class', 'Interface', 'TypeAlias'],
  treatValidationWarningsAsErrors: true,
  skipErrorChecking: true,
  disableSources: true,
  plugin: ['./scripts/typedoc-entry-names.mjs'],
};
