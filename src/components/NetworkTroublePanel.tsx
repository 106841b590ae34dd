"use client";
// For demos: make the network misbehave on the next checkout and watch the idempotency key keep
// it to one order. The switches live in src/trpc/network-trouble.ts; the checkout reads them.
import { useId, useSyncExternalStore } from "react";
import { networkTrouble } from "@/trpc/network-trouble";
import { Options } from "./Options";

const SLOW_OPTIONS = [
  { value: 0, label: "Off" },
  { value: 1500, label: "1.5 seconds" },
  { value: 3000, label: "3 seconds" },
  { value: 6000, label: "6 seconds" },
];

export function NetworkTroublePanel() {
  const headingId = useId();
  return (
    <section className="card" aria-labelledby={headingId} style={{ marginTop: "2rem" }}>
      <h2 id={headingId}>Network trouble (demo)</h2>
      <p className="muted" style={{ marginTop: 0 }}>
        Make the next checkout go wrong on purpose. Whatever you pick, the shop places one order.
        Each setting applies to the next order only and then switches itself off, so every demo
        starts from a plain checkout and shows one thing at a time.
      </p>
      <TroubleSwitches />
      <TroubleLog />
    </section>
  );
}

function TroubleSwitches() {
  const trouble = useNetworkTrouble();
  return (
    <div style={{ display: "grid", gap: "0.5rem" }}>
      <label className="row">
        <input
          type="checkbox"
          checked={trouble.dropNextResponse}
          onChange={(e) => networkTrouble.set({ dropNextResponse: e.target.checked })}
        />
        Drop the next response (the server answers, the browser never hears it)
      </label>
      <label className="row">
        <input
          type="checkbox"
          checked={trouble.doubleSubmitNext}
          onChange={(e) => networkTrouble.set({ doubleSubmitNext: e.target.checked })}
        />
        Send the next order twice at once
      </label>
      <label className="row">
        Slow the server&apos;s processing
        <select
          value={trouble.slowMs}
          onChange={(e) => networkTrouble.set({ slowMs: Number(e.target.value) })}
        >
          <Options of={SLOW_OPTIONS} />
        </select>
      </label>
    </div>
  );
}

/** What the checkout did with the switches, newest first. */
function TroubleLog() {
  const log = useSyncExternalStore(
    networkTrouble.subscribe,
    networkTrouble.log,
    networkTrouble.serverLog,
  );
  return (
    <>
      <div className="row" style={{ justifyContent: "space-between", marginTop: "1rem" }}>
        <h3 style={{ fontSize: "0.95rem", margin: 0 }}>What happened</h3>
        {log.length > 0 && (
          <button type="button" className="secondary" onClick={() => networkTrouble.clearLog()}>
            Clear the log
          </button>
        )}
      </div>
      {log.length === 0 ? (
        <p className="muted">Nothing yet: place an order.</p>
      ) : (
        <ol
          aria-label="Checkout log"
          reversed
          style={{ paddingLeft: "1.5rem", fontSize: "0.9rem" }}
        >
          {log.map((entry) => (
            <li key={entry.id}>
              <span className="muted mono">
                {new Date(entry.at).toLocaleTimeString("en", { hour12: false })}
              </span>{" "}
              {entry.text}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

/** The demo's network-trouble switches, as they change (the checkout reads them too). */
export function useNetworkTrouble() {
  return useSyncExternalStore(
    networkTrouble.subscribe,
    networkTrouble.get,
    networkTrouble.getServerSnapshot,
  );
}
