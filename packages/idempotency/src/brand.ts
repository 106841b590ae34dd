// The package's error classes are recognised across copies of the package. A bundler may load this
// package more than once in one process (`next build` bundles each route and instrumentation on
// its own, each with its own copy of a workspace package), and each copy has its own classes: an
// engine made by one copy then throws errors that another copy's `instanceof` would not know, and
// a 409 became a 500. Each class marks its instances with a registered symbol (`Symbol.for`, the
// same in every copy) and answers `instanceof` by that mark.
const markOf = (name: string) => Symbol.for(`@once/idempotency:${name}`);

export function mark(instance: object, name: string): void {
  Object.defineProperty(instance, markOf(name), { value: true });
}

export function isMarked(value: unknown, name: string): boolean {
  return (value as Record<symbol, unknown> | null | undefined)?.[markOf(name)] === true;
}
