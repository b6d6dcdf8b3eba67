// Koa 2 under its npm alias `koa2` ships no types; its API is the part of Koa 3's that the tests use.
declare module 'koa2' {
  import type Koa from 'koa';

  const Koa2: typeof Koa;
  export default Koa2;
}
