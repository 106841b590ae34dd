// Who the client is: the socket's peer, or (TRUSTED_PROXIES=N) the entry N hops left of it in
// X-Forwarded-For. (That the server really writes the peer's address: front-door.test.ts.)
import { describe, expect, it } from "vitest";
import { clientAddress, PEER_ADDRESS_HEADER } from "./client-address";

const headers = (peer: string | undefined, xff?: string) =>
  new Headers({
    ...(peer ? { [PEER_ADDRESS_HEADER]: peer } : {}),
    ...(xff ? { "x-forwarded-for": xff } : {}),
  });

describe("clientAddress", () => {
  it("by default X-Forwarded-For is not believed: the peer is the client", () => {
    expect(clientAddress(headers("192.0.2.1", "10.0.0.1, 10.0.0.2"))).toBe("192.0.2.1");
    expect(clientAddress(headers("192.0.2.1", "10.0.0.1"), 0)).toBe("192.0.2.1");
  });

  it("with N trusted proxies, the entry N hops left of the peer", () => {
    expect(clientAddress(headers("127.0.0.1", "forged, 203.0.113.5"), 1)).toBe("203.0.113.5");
    expect(clientAddress(headers("127.0.0.1", "forged, 203.0.113.5, 10.0.0.9"), 2)).toBe(
      "203.0.113.5",
    );
    expect(clientAddress(headers("127.0.0.1", "203.0.113.5"), 3)).toBe("203.0.113.5"); // fewer hops than claimed: the leftmost
  });

  it("no peer (no server wrote it), or a value too long to be an address: unknown", () => {
    expect(clientAddress(headers(undefined, "10.0.0.1"))).toBe("unknown");
    expect(clientAddress(headers("x".repeat(65)))).toBe("unknown");
  });
});
