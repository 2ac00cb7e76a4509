/**
 * What a field's name or a tool's input schema says of answers not seen yet, for `observed_shape.ts`:
 * the few places where one observed answer is known not to show every answer a tool gives (each rule
 * fixed by failures of the recorded corpus, `tests/catalog/_result_corpus.ts`, and by how the APIs
 * behind it document those fields). Names only: no value of an answer is looked at.
 *
 * @module
 */

/** A field name lower-cased, without `_` and `-` (`custom_fields`, `customFields` -> `customfields`). */
function normalized(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, "");
}

/**
 * Names APIs give to free-form or type-dependent objects (Sentry's `metadata` has `value` and
 * `filename` for an error and only `title` otherwise; Stripe's `metadata`, Kubernetes' `labels`,
 * an event's `payload`): which keys one answer shows says nothing of the next.
 */
const OPEN_OBJECT_NAMES = new Set([
  "meta",
  "metadata",
  "extra",
  "extras",
  "attributes",
  "attrs",
  "properties",
  "labels",
  "annotations",
  "tags",
  "context",
  "contexts",
  "details",
  "payload",
  "settings",
  "options",
  "config",
  "configuration",
  "params",
  "parameters",
  "variables",
  "env",
  "headers",
  "custom",
  "customfields",
]);

/**
 * Whether an object under `key` is open (its observed properties are rendered optional, with an
 * index signature): `metadata`, `extra`, `attributes`, `payload`, `settings`... (see
 * {@link OPEN_OBJECT_NAMES}).
 */
export function isOpenObjectKey(key: string): boolean {
  return OPEN_OBJECT_NAMES.has(normalized(key));
}

/**
 * Whether `key` holds a value whose type is the data's own, not the API's: `value` of a custom field,
 * setting, tag or metric (`{ name: "Priority", value: "High" }` then `{ name: "Effort", value: 3 }`),
 * `defaultValue`, `field_value`. Such a string or number is rendered `string | number | null`.
 */
export function isValueSlotKey(key: string): boolean {
  const n = normalized(key);
  return n === "value" || (n.endsWith("value") && n.length <= 16 && key !== n);
}

/**
 * Whether `key` is a pagination cursor or next-page link (`startCursor`, `endCursor`, `next_cursor`,
 * `nextPageToken`, `next`): `null` on an empty or last page however many pages had one (the GraphQL
 * cursor connections specification declares `startCursor` and `endCursor` nullable; the GitHub MCP
 * server leaves an empty one out), so a string there is always optional and keeps `| null`.
 */
export function isCursorKey(key: string): boolean {
  const n = normalized(key);
  return n.endsWith("cursor") || n.endsWith("pagetoken") ||
    ["next", "prev", "previous", "nextpage", "prevpage", "nexturl", "nextlink"].includes(n);
}

/** A boolean input that adds media to the answer: `includeImage`, `with_screenshot`, `attachAudio`. */
const MEDIA_SWITCH = /^(?:include|with|add|attach|return)[-_]?(images?|screenshots?|audio|media)$/i;

/**
 * The kinds of media blocks a tool's answer may carry besides text, by its input schema: a boolean
 * argument such as `includeImage` says that some answers are text and image blocks though the
 * answer observed was text alone. `[]` when the schema says nothing of the kind.
 *
 * @param inputSchema The tool's input schema (as listed; anything else gives `[]`).
 */
export function mediaSwitches(inputSchema: unknown): ("image" | "audio")[] {
  const properties = (inputSchema as { properties?: unknown } | null)?.properties;
  if (typeof properties !== "object" || properties === null) return [];
  const kinds = new Set<"image" | "audio">();
  for (const [name, schema] of Object.entries(properties)) {
    const m = MEDIA_SWITCH.exec(name);
    if (m === null || (schema as { type?: unknown } | null)?.type !== "boolean") continue;
    const word = m[1]!.toLowerCase();
    if (word !== "audio") kinds.add("image");
    if (word === "audio" || word === "media") kinds.add("audio");
  }
  return [...kinds];
}
