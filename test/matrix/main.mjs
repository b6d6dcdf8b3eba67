// Command-line entry of the matrix case script (Node, Bun, Deno): prints the results as one JSON line.
import { runCases } from './cases.mjs';

console.log(JSON.stringify(await runCases()));
