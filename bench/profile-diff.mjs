// Where two server variants differ in CPU time, function by function: a `node --cpu-prof` profile of
// each under the same load, self time per request side by side, largest differences first.
//   npm run build && node bench/profile-diff.mjs express-noop express-keygate [seconds] [rows]
// The variants are those of bench/server.mjs. Profiles are noisy: run it twice before trusting a row.
import { generateKey } from 'keygate';
import { captureProfile } from './profile.mjs';

const [a, b, seconds = '8', rows = '30'] = process.argv.slice(2);
if (!a || !b) {
  console.error('usage: node bench/profile-diff.mjs <variant A> <variant B> [seconds] [rows]');
  process.exit(1);
}

/** Self time per request (µs) by `function file:line`, idle time left out. */
function selfTimes({ profile, requests }) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const times = new Map();
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = nodes.get(id);
    if (functionName === '(idle)') return;
    const where = url.includes('node_modules/')
      ? url.replace(/^.*node_modules\//, '')
      : url.replace(/^.*\/(dist|bench)\//, '$1/');
    const name = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    times.set(name, (times.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / requests);
  });
  return times;
}

const key = generateKey({ mode: 'live' });
const A = selfTimes(await captureProfile({ key, variant: a, seconds: Number(seconds) }));
const B = selfTimes(await captureProfile({ key, variant: b, seconds: Number(seconds) }));
const total = (m) => [...m.values()].reduce((x, y) => x + y, 0);
console.log(`busy CPU per request: ${a} ${total(A).toFixed(1)} µs, ${b} ${total(B).toFixed(1)} µs`);
console.log(`${'B - A µs'.padStart(9)} ${'A µs'.padStart(7)} ${'B µs'.padStart(7)}  function`);
const names = [...new Set([...A.keys(), ...B.keys()])];
const diff = (n) => (B.get(n) ?? 0) - (A.get(n) ?? 0);
for (const n of names.sort((x, y) => Math.abs(diff(y)) - Math.abs(diff(x))).slice(0, Number(rows))) {
  const cells = [diff(n), A.get(n) ?? 0, B.get(n) ?? 0].map((x, i) => x.toFixed(2).padStart(i ? 7 : 9));
  console.log(`${cells.join(' ')}  ${n}`);
}
