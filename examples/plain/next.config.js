/** @type {import("next").NextConfig} */
export default {
  // Type-checked by `tsc --noEmit` (scripts/example.ts), not twice.
  typescript: { ignoreBuildErrors: true },
  // This app sits inside another project (the repository's examples/): trace files from here.
  outputFileTracingRoot: import.meta.dirname,
};
