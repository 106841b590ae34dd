/**
 * Run `build` or `dev` with `SKIP_ENV_VALIDATION` to skip env validation. This is especially useful
 * for Docker builds.
 */
import "./src/env.js";

/** @type {import("next").NextConfig} */
const config = {
  // Linted and type-checked by the repository's own steps (`npm run lint`, `tsc --noEmit` in
  // scripts/example.ts): not twice, in the build too.
  eslint: { ignoreDuringBuilds: true },
  typescript: { ignoreBuildErrors: true },
  // This app sits inside another project (the repository's examples/): trace files from here.
  outputFileTracingRoot: import.meta.dirname,
};

export default config;
