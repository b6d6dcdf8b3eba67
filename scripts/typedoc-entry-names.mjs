// TypeDoc plugin: names each documented module by the import a user writes (`keygate/fetch`), not
// by its source folder (`frameworks/fetch`). The pairs come from package.json `exports`.
import { posix } from 'node:path';
import { Converter, ReflectionKind } from 'typedoc';
import { entryPoints } from './entry-points.mjs';

/** TypeDoc names a module `frameworks/fetch` for `frameworks/fetch/index.ts`. */
const NAMES = Object.fromEntries(entryPoints().map((entry) => [posix.dirname(entry.source), entry.importName]));

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getChildrenByKind(ReflectionKind.Module)) {
      module.name = NAMES[module.name] ?? module.name;
    }
  });
}
