import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const r = await build({
  entryPoints: [process.argv[2] ?? 'src/auth/authenticate.ts'],
  bundle: true,
  write: false,
  minify: true,
  format: 'esm',
  platform: 'neutral',
  conditions: ['worker', 'browser'],
  mainFields: ['module', 'main'],
  target: 'es2022',
  external: ['node:*'],
  metafile: true,
  logLevel: 'silent',
  alias: { '#digest': './src/runtime/web-digest.ts' },
});
const out = Object.values(r.metafile.outputs)[0];
for (const [f, v] of Object.entries(out.inputs).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput))
  console.log(String(v.bytesInOutput).padStart(6), f);
console.log('gzip', gzipSync(r.outputFiles[0].contents, { level: 9 }).length);
