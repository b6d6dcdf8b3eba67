// Types of scripts/entry-points.mjs, for tsup.config.ts and the tests that import it.

/** The parts of package.json the entry list is read from. */
export interface Manifest {
  name: string;
  exports: Record<string, unknown>;
  imports?: Record<string, unknown>;
  typesVersions?: unknown;
}

/** One public entry point (a subpath of `exports` with a `source` condition). */
export interface EntryPoint {
  /** `./express` (`.` for the root). */
  subpath: string;
  /** `keygate/express`: what a user imports. */
  importName: string;
  /** The file it is built from, relative to the repository: `frameworks/express/index.ts`. */
  source: string;
  /** Its name in dist/, without extension: `express`. */
  output: string;
  /** The ESM type declarations' file: `./dist/express.d.ts`. */
  types: string | undefined;
}

/** One module of the `imports` map, built as its own file (`#errors`, each `#digest` file). */
export interface InternalModule {
  specifier: string;
  source: string;
  output: string;
}

export function readManifest(): Manifest;
export function entryPoints(manifest?: Manifest): EntryPoint[];
export function internalModules(manifest?: Manifest): InternalModule[];
export function typesVersionsOf(manifest?: Manifest): { '*': Record<string, string[]> };
