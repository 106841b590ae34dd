// @once/idempotency/config: the engine's configuration schema, for an app that validates its
// own configuration in one place (the engine parses `config` itself otherwise).
export {
  parseEngineConfig,
  DEFAULT_ENGINE_CONFIG,
  engineConfigSchema,
  type EngineConfig,
  type EngineConfigInput,
} from "../config.js";
