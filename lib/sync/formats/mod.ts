/**
 * The agent-config editors `sync` writes through, one per file format: JSON (strict, as Claude Code
 * reads it), JSONC, TOML (Codex) and YAML (Goose). Each changes one named entry inside one
 * container and keeps every other byte; each parses under a nesting budget.
 *
 * @module
 */
export {
  type ConfigFormat,
  ConfigShapeError,
  ConfigSyntaxError,
  describePath,
  type EntryAddress,
} from "./config_format.ts";
export { JSONC, jsonFormat, type JsonFormatOptions, STRICT_JSON } from "./json_format.ts";
export { TOML } from "./toml_format.ts";
export { YAML } from "./yaml_format.ts";
export { ConfigTooDeepError, MAX_CONFIG_NESTING_DEPTH } from "./_budget.ts";
export { deepEqual, getAtPath, isPlainObject, type PlainObject } from "./values.ts";
