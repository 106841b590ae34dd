// Fixed loopback ports for the Playwright web server (e2e/server.ts) and its control server.
export const TEST_PORT = Number(process.env.E2E_PORT ?? 3100);
export const CONTROL_PORT = Number(process.env.E2E_CONTROL_PORT ?? 3101);
export const BASE_URL = `http://127.0.0.1:${TEST_PORT}`;
export const CONTROL_URL = `http://127.0.0.1:${CONTROL_PORT}`;
