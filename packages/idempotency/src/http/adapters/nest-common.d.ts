// The one export of @nestjs/common the NestJS adapter calls (an optional peer dependency: only an
// app that imports @once/idempotency/nestjs has it). Declared here so the package builds without
// NestJS installed; NestJS's own declaration is the same function.
declare module "@nestjs/common" {
  export function UseInterceptors(...interceptors: unknown[]): MethodDecorator & ClassDecorator;
}
