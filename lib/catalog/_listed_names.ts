/**
 * The names a tool listing holds (tool names and the property names of their schemas), recorded with
 * the secret registry so that the credential shapes never rewrite them in what we print: a tool named
 * `npm_package_info` stayed `npm_***(...)` in its declaration, which no longer parses.
 *
 * @module
 */
import type { Tool } from "../backends/mod.ts";
import { processSecrets, type SecretRegistry } from "../secrets/mod.ts";
import { SliceClock } from "../time_slices.ts";

/** Deepest schema level whose property names are recorded. */
const MAX_SCHEMA_DEPTH = 32;

/** Longest run of recording before the event loop turns (a macrotask), in ms. */
const SLICE_MS = 20;

/**
 * Records every tool name of `listing.tools`, its script key (`-` and other characters as `_`), and every
 * property name in its `inputSchema` and `outputSchema` (32 levels deep) with `registry`, letting the
 * event loop turn every {@link SLICE_MS} ms (50,000 tools recorded at once held the thread 60-150 ms).
 *
 * @param registry @default processSecrets
 * @returns `listing`, as it was.
 */
export async function recordListedNames<T extends { tools: readonly Tool[] }>(
  listing: T,
  registry: SecretRegistry = processSecrets,
): Promise<T> {
  const tools = listing.tools;
  const names: string[] = [];
  const add = (name: string) => {
    names.push(name);
    const key = name.replace(/[^A-Za-z0-9_$]/g, "_");
    if (key !== name) names.push(key);
  };
  const walk = (schema: unknown, depth: number) => {
    if (depth > MAX_SCHEMA_DEPTH || typeof schema !== "object" || schema === null) return;
    if (Array.isArray(schema)) {
      for (const item of schema) walk(item, depth + 1);
      return;
    }
    for (const [key, value] of Object.entries(schema)) {
      if (key === "properties" && typeof value === "object" && value !== null && !Array.isArray(value)) {
        for (const name of Object.keys(value)) add(name);
      }
      walk(value, depth + 1);
    }
  };
  const clock = new SliceClock(SLICE_MS);
  for (const tool of tools) {
    add(tool.name);
    walk(tool.inputSchema, 0);
    walk(tool.outputSchema, 0);
    if (clock.isDue) {
      registry.registerNames(names.splice(0));
      await clock.pause();
    }
  }
  registry.registerNames(names);
  return listing;
}
