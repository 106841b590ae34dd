// Fixed loopback ports for the Playwright web server (e2e/server.ts) and its control server, the
// port above it: one variable moves both when another run holds them.
export const TEST_PORT = Number(process.env.E2E_PORT ?? 3100);
export const CONTROL_PORT = TEST_PORT + 1;
export const BASE_URL = `http://127.0.0.1:${TEST_PORT}`;
export const CONTROL_URL = `http://127.0.0.1:${CONTROL_PORT}`;
