// The consumer's ESM side: every entry point through `import`.
import { fileURLToPath } from 'node:url';
import run from './scenario.cjs';

const resolvePath = (name) => fileURLToPath(import.meta.resolve(name));
console.log(JSON.stringify(await run((name) => import(name), resolvePath)));
