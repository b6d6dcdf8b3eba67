// Built by bench/next.mjs in copies of this folder under bench/.build, offline. The repository's own
// typecheck covers these files, so the build skips it.
/** @type {import('next').NextConfig} */
export default {
  typescript: { ignoreBuildErrors: true },
  poweredByHeader: false,
};
