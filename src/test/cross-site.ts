// The body of a refused cross-site mutation, in tRPC's error shape, as the guard's test (through
// the route's handler) and the production doors spec (over HTTP) expect it. `message` is the
// caller's matcher: Vitest and Playwright each have their own `expect`.
export const crossSiteRefusal = (message: unknown) => ({
  error: {
    message,
    code: -32003,
    data: {
      code: "FORBIDDEN",
      httpStatus: 403,
      reason: "cross_site_request",
      docs: "/docs/errors#cross_site_request",
    },
  },
});
