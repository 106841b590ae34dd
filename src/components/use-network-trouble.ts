"use client";
import { useSyncExternalStore } from "react";
import { networkTrouble } from "@/trpc/network-trouble";

/** The demo's network-trouble switches (src/trpc/network-trouble.ts), as they change. */
export function useNetworkTrouble() {
  return useSyncExternalStore(
    networkTrouble.subscribe,
    networkTrouble.get,
    networkTrouble.getServerSnapshot,
  );
}
