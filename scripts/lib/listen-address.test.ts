// Where `npm run dev` / `npm start` listen, and when demo mode refuses to start.
import { describe, expect, it } from "vitest";
import { decideListenAddress, isLoopback } from "./listen-address";

const base = { host: undefined, demo: false, allowRemoteDemo: false };

describe("the listening address", () => {
  it("`npm run dev` listens on 127.0.0.1 unless HOST says otherwise, and says so", () => {
    expect(decideListenAddress({ ...base, mode: "dev", demo: true })).toEqual({
      ok: true,
      host: "127.0.0.1",
      announcement: expect.stringMatching(/127\.0\.0\.1 \(this machine only; set HOST=0\.0\.0\.0/),
    });
    expect(decideListenAddress({ ...base, mode: "dev", demo: false, host: "::1" })).toMatchObject({
      ok: true,
      host: "::1",
    });
  });

  it("a demo on `npm start` stays on loopback; a production `npm start` serves its network", () => {
    expect(decideListenAddress({ ...base, mode: "start", demo: true })).toMatchObject({
      ok: true,
      host: "127.0.0.1",
    });
    expect(decideListenAddress({ ...base, mode: "start" })).toMatchObject({
      ok: true,
      host: "0.0.0.0",
      announcement: expect.stringMatching(/network/),
    });
  });

  it("demo mode on an address the network reaches refuses to start, in one sentence, unless DEMO_ALLOW_REMOTE=1", () => {
    for (const mode of ["dev", "start"] as const) {
      const refused = decideListenAddress({ ...base, mode, demo: true, host: "0.0.0.0" });
      expect(refused.ok).toBe(false);
      if (!refused.ok)
        expect(refused.refusal).toMatch(/^Demo mode opens[^\n]*DEMO_ALLOW_REMOTE=1[^.\n]*\.$/);
      expect(
        decideListenAddress({
          ...base,
          mode,
          demo: true,
          host: "192.0.2.2",
          allowRemoteDemo: true,
        }),
      ).toMatchObject({ ok: true, host: "192.0.2.2" });
    }
  });

  it("knows loopback when it sees it", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"])
      expect(isLoopback(host), host).toBe(true);
    for (const host of [
      "0.0.0.0",
      "::",
      "192.0.2.2",
      "127.0.0.1.evil.example",
      "localhost.example",
    ])
      expect(isLoopback(host), host).toBe(false);
  });
});
