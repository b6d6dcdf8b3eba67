// The consumer's CommonJS side: every entry point through `require`.
const run = require('./scenario.cjs');

run(async (name) => require(name), require.resolve).then(
  (out) => console.log(JSON.stringify(out)),
  (error) => {
    console.error(error);
    process.exitCode = 1;
  },
);
