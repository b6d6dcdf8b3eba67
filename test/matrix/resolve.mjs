// Prints which files this runtime resolves `keygate` and its `#digest` module to, when it loads
// keygate as an installed package (no bundler): the built dist, never the TypeScript sources.
console.log(JSON.stringify({ keygate: import.meta.resolve('keygate'), digest: import.meta.resolve('#digest') }));
