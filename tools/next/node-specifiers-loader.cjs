// A Turbopack loader for the engine's source (packages/idempotency/src), which the app compiles
// directly (tsconfig.json's paths; tools/repo/engine-source.test.ts). The engine is written for
// Node's ESM resolution (NodeNext): a relative import names the file it compiles to, `./engine.js`
// for engine.ts. tsc, tsx and Vitest map `.js` back to `.ts`; Turbopack in Next.js 16.4 does not
// (webpack's resolve.extensionAlias has no Turbopack equivalent yet), so this rewrites each
// relative `.js` specifier to the `.ts` file beside it. Nothing else changes, and only files the
// rule in next.config.js selects pass through here.
const RELATIVE_JS = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.\.?\/[^"'\n]+)\.js\2/g;

module.exports = function nodeSpecifiersLoader(source) {
  return source.replace(RELATIVE_JS, "$1$2$3.ts$2");
};
