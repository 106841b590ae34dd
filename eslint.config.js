// Lint: typescript-eslint's recommended rules, plus the type-aware rules that catch real bugs in
// this codebase (a forgotten await on a transaction or a promise passed where a callback belongs),
// and React's hooks rules.
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      ".next/",
      "src/generated/",
      ".data/",
      "test-results/",
      "playwright-report/",
      "next-env.d.ts",
      "packages/*/dist/",
      "packages/*/test/support/generated/",
      "examples/*/node_modules/",
      "examples/*/src/generated/",
      "examples/*/generated/",
      "examples/*/.next/",
      "examples/*/next-env.d.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-misused-promises": [
        "error",
        { checksVoidReturn: { attributes: false } },
      ],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    // Hooks rules where React lives (test helpers named use* elsewhere are not hooks).
    files: ["src/app/**/*.tsx", "src/components/**/*.tsx", "src/trpc/**/*.{ts,tsx}"],
    plugins: { "react-hooks": reactHooks },
    rules: { "react-hooks/rules-of-hooks": "error", "react-hooks/exhaustive-deps": "warn" },
  },
  {
    // One configuration: the app and the engine read no environment variable but through
    // src/server/config.ts (parsed once at start-up, passed down from src/server/app.ts). Tests
    // build their configuration; tools and scripts outside src/ read their own arguments.
    files: ["src/**/*.{ts,tsx}", "packages/*/src/**/*.ts"],
    ignores: ["src/server/config.ts", "**/*.test.ts", "src/test/**"],
    rules: {
      "no-restricted-properties": [
        "error",
        {
          object: "process",
          property: "env",
          message: "Read configuration through loadConfig (src/server/config.ts) and pass it down.",
        },
      ],
    },
  },
  {
    // Product code in small pieces: past 40 lines (blank lines and comments aside, a factory
    // counted with its closures, an IIFE as a function) a function does more than one thing, and
    // past 400 a file holds more than one module's job. Tests read top to bottom as scripts and
    // are not held to it.
    files: ["src/**/*.{ts,tsx}", "packages/*/src/**/*.{ts,tsx}", "services/**/*.{ts,tsx}"],
    ignores: ["**/*.test.{ts,tsx}", "src/test/**"],
    rules: {
      "max-lines-per-function": [
        "error",
        { max: 40, skipBlankLines: true, skipComments: true, IIFEs: true },
      ],
      "max-lines": ["error", { max: 400, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // The lab (benches, soak, fixtures) is held to it whole, its tests' describe blocks too: it
    // grew long functions where nothing held it.
    files: ["lab/**/*.ts"],
    rules: {
      "max-lines-per-function": ["error", { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
  // CommonJS: packages/idempotency/.dependency-cruiser.cjs, and the Turbopack loader (tools/next/),
  // which Next.js loads with require.
  {
    files: ["**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { module: "writable", require: "readonly" },
    },
  },
);
