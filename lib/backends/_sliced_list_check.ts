/**
 * The SDK's own check of a listing page (`tools/list`, `resources/list`), a slice of items at a time. Given
 * no schema, the SDK checks a whole page with one zod parse in the turn of the event loop that read it: a
 * page of 5,000 tools of a 50,000-tool server held mcp-serve's thread 50-150 ms per page (pings waited).
 * Here the envelope is checked with the page's MCP schema and each item with the item's
 * (`specTypeSchemas`, the same schemas), and the event loop turns whenever a slice has run
 * {@link CHECK_SLICE_MS}.
 *
 * @module
 */
import { specTypeSchemas } from "@modelcontextprotocol/client";
import { SliceClock } from "../time_slices.ts";

/** Longest run of checking before the event loop turns (a macrotask), in ms. */
export const CHECK_SLICE_MS = 20;

/** One problem found, as a Standard Schema issue. */
interface Issue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** What a Standard Schema's `validate` answers. */
type Outcome = { readonly value: unknown; readonly issues?: undefined } | {
  readonly issues: readonly Issue[];
};

/** The Standard Schema shape the SDK's `request(request, schema, options)` takes. */
export interface ListPageSchema {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => Promise<Outcome>;
  };
}

/** A Standard Schema whose `validate` may answer at once or later. */
interface AnySchema {
  readonly "~standard": { readonly validate: (value: unknown) => Outcome | Promise<Outcome> };
}

const PAGES = {
  "tools/list": { key: "tools", page: "ListToolsResult", item: "Tool" },
  "resources/list": { key: "resources", page: "ListResourcesResult", item: "Resource" },
} as const;

/**
 * The result schema for one page of `method`: the same verdict and value as the SDK's check of the page
 * (an issue's path starts with the list's key and the item's index, e.g. `tools.3.name`), reached a slice
 * of items at a time.
 */
export function slicedListCheck(method: keyof typeof PAGES): ListPageSchema {
  const { key, page, item } = PAGES[method];
  const pageSchema = specTypeSchemas[page] as unknown as AnySchema;
  const itemSchema = specTypeSchemas[item] as unknown as AnySchema;
  return {
    "~standard": {
      version: 1,
      vendor: "cargo-agents",
      async validate(value: unknown): Promise<Outcome> {
        const items = isRecord(value) ? value[key] : undefined;
        if (!isRecord(value) || !Array.isArray(items)) return await pageSchema["~standard"].validate(value);
        const head = await pageSchema["~standard"].validate({ ...value, [key]: [] });
        if (head.issues) return head;
        const checked: unknown[] = [];
        const clock = new SliceClock(CHECK_SLICE_MS);
        for (let i = 0; i < items.length; i++) {
          const one = await itemSchema["~standard"].validate(items[i]);
          if (one.issues) {
            return {
              issues: one.issues.map((issue) => ({ ...issue, path: [key, i, ...(issue.path ?? [])] })),
            };
          }
          checked.push(one.value);
          await clock.pause();
        }
        return { value: { ...(head.value as Record<string, unknown>), [key]: checked } };
      },
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
