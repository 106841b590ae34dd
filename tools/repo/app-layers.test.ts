// The app's layer rules (.dependency-cruiser.cjs, run by `npm run lint`) bite: a small tree with one
// import that breaks each rule, cruised with the app's own configuration, reports every one of
// them; the same tree without those imports reports none.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "app-layers-"));
  writeFileSync(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@/*": ["./src/*"] } } }),
  );
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

function violations(dir: string): string[] {
  const run = spawnSync(
    process.execPath,
    [
      path.join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs"),
      // As `npm run structure` does: the app, and a folder of commands beside it.
      "src",
      "scripts",
      "--config",
      path.join(ROOT, ".dependency-cruiser.cjs"),
      "--output-type",
      "json",
    ],
    { cwd: dir, encoding: "utf8", timeout: 60_000 },
  );
  const report = JSON.parse(run.stdout) as {
    summary: { violations: { rule: { name: string }; from: string; to: string }[] };
  };
  return report.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

const LAYERS = {
  "src/app/page.ts": "export const page = 1;\n",
  "src/server/api/routers/orders.ts": "export const select = { id: true };\n",
  "src/test/factory.ts": "export const make = () => 1;\n",
  "src/shared/reasons.ts": "export const reason = 'x';\n",
  "src/server/config.ts": "export const config = {};\n",
  "src/http/plain-error.ts": "export const plainError = () => 1;\n",
  "src/payments/outbox.ts": "export const topic = 'payment.charge';\n",
  "src/payments/index.ts": 'export { topic } from "./outbox";\n',
  "src/payments/config.ts": "export const section = {};\n",
  "scripts/noop.ts": "export {};\n",
};

describe("the app's layer rules", () => {
  it("report an import that breaks each rule", () => {
    const dir = tree({
      ...LAYERS,
      "src/server/render.ts": 'import { page } from "@/app/page";\nexport const x = page;\n',
      "src/shared/text.ts": 'import { x } from "../server/render";\nexport const y = x;\n',
      "src/server/orders/read.ts":
        'import { select } from "../api/routers/orders";\nexport const s = select;\n',
      "src/server/jobs.ts": 'import { make } from "../test/factory";\nexport const j = make;\n',
      "src/server/edge/door.ts": "export const door = 1;\n",
      "src/server/health.ts": 'import { door } from "./edge/door";\nexport const h = door;\n',
      "src/http/limit.ts": 'import { h } from "../server/health";\nexport const l = h;\n',
      "src/server/checkout/place.ts":
        'import { topic } from "../../payments/outbox";\nexport const p = topic;\n',
      "src/payments/webhook.ts":
        'import { config } from "../server/config";\nexport const w = config;\n',
      "scripts/worker.ts":
        'import { topic } from "../src/payments/outbox";\nexport const s = topic;\n',
    });
    expect(violations(dir)).toEqual([
      "only-the-composition-root-uses-the-edge: src/server/health.ts → src/server/edge/door.ts",
      "payments-imports-nothing-of-the-shop: src/payments/webhook.ts → src/server/config.ts",
      "payments-only-through-its-entry: scripts/worker.ts → src/payments/outbox.ts",
      "payments-only-through-its-entry: src/server/checkout/place.ts → src/payments/outbox.ts",
      "production-never-imports-test-helpers: src/server/jobs.ts → src/test/factory.ts",
      "server-never-imports-the-ui: src/server/render.ts → src/app/page.ts",
      "services-never-import-routers: src/server/orders/read.ts → src/server/api/routers/orders.ts",
      "shared-imports-nothing-of-the-app: src/shared/text.ts → src/server/render.ts",
      "the-http-kit-stands-alone: src/http/limit.ts → src/server/health.ts",
    ]);
  });

  it("report nothing when the arrows point down", () => {
    const dir = tree({
      ...LAYERS,
      "src/app/uses-server.ts": 'import { j } from "../server/jobs";\nexport const u = j;\n',
      "src/server/jobs.ts":
        'import { reason } from "@/shared/reasons";\nexport const j = reason;\n',
      "src/server/api/routers/uses.ts": 'import { j } from "../../jobs";\nexport const r = j;\n',
      "src/http/limit.ts": 'import { reason } from "@/shared/reasons";\nexport const l = reason;\n',
      "src/server/edge/door.ts":
        'import { j } from "../jobs";\nimport { l } from "../../http/limit";\nexport const d = [j, l];\n',
      "src/server/app.ts": 'import { d } from "./edge/door";\nexport const app = d;\n',
      "src/server/checkout/place.ts":
        'import { topic } from "@/payments";\nexport const p = topic;\n',
      "src/payments/webhook.ts":
        'import { plainError } from "../http/plain-error";\nimport { reason } from "@/shared/reasons";\nexport const w = [plainError, reason];\n',
      "scripts/worker.ts": 'import { topic } from "../src/payments";\nexport const s = topic;\n',
      "src/server/config.ts":
        'import { section } from "@/payments/config";\nexport const c = section;\n',
    });
    expect(violations(dir)).toEqual([]);
  });
});
