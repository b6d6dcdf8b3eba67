// Built by test/frameworks/next-build.test.ts in a copy of this folder, offline. The repository's own
// typecheck covers these files, so the build skips it.
/** @type {import('next').NextConfig} */
export default {
  typescript: { ignoreBuildErrors: true },
  poweredByHeader: false,
};
