/**
 * The check a `tools/call` result gets before it reaches the catalog, handed to the SDK in place of its
 * own result schema.
 *
 * @module
 */
import type { CallToolResult, StandardSchemaV1 } from "@modelcontextprotocol/client";

/**
 * A JSON object whose `content` (an empty list when absent), `isError` and `structuredContent` have their
 * envelope types; what is inside is read by `unwrapToolResult`, which takes any block as it is. The SDK's
 * own check costs, per request in SDK 2.4, a failed probe parse that formats a ZodError and then a full
 * parse of every block: it was most of the meta-server's own time per tool call.
 */
export const CALL_RESULT_ENVELOPE: StandardSchemaV1<unknown, CallToolResult> = envelope(false);

/**
 * As {@link CALL_RESULT_ENVELOPE} for a modern (2026-07-28) server, whose `structuredContent` may be any
 * JSON value (an array, a string, a number...), not only an object.
 */
export const MODERN_CALL_RESULT_ENVELOPE: StandardSchemaV1<unknown, CallToolResult> = envelope(true);

function envelope(anyStructured: boolean): StandardSchemaV1<unknown, CallToolResult> {
  return {
    "~standard": {
      version: 1,
      vendor: "cargo-agents",
      validate(value: unknown) {
        const issue = (message: string) => ({ issues: [{ message: `tools/call result ${message}` }] });
        if (typeof value !== "object" || value === null || Array.isArray(value)) {
          return issue("is not an object");
        }
        const result = value as Record<string, unknown>;
        if (result.content !== undefined && !Array.isArray(result.content)) {
          return issue("content is not a list");
        }
        if (result.isError !== undefined && typeof result.isError !== "boolean") {
          return issue("isError is not a boolean");
        }
        const structured = result.structuredContent;
        if (
          !anyStructured && structured !== undefined &&
          (typeof structured !== "object" || Array.isArray(structured))
        ) {
          return issue("structuredContent is not an object");
        }
        return {
          value: (result.content === undefined ? { ...result, content: [] } : result) as CallToolResult,
        };
      },
    },
  };
}
