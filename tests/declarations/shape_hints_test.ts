import assert from "node:assert/strict";
import {
  isCursorKey,
  isOpenObjectKey,
  isValueSlotKey,
  mediaSwitches,
} from "../../lib/declarations/_shape_hints.ts";

Deno.test("isOpenObjectKey() knows free-form field names whatever their case or separators", () => {
  for (const key of ["metadata", "Metadata", "extra", "custom_fields", "customFields", "payload", "_meta"]) {
    assert.ok(isOpenObjectKey(key), key);
  }
  for (const key of ["project", "user", "metadata_url", "fields", "data"]) {
    assert.ok(!isOpenObjectKey(key), key);
  }
});

Deno.test("isValueSlotKey() accepts value and compound names ending in value only", () => {
  for (const key of ["value", "Value", "defaultValue", "field_value", "text-value"]) {
    assert.ok(isValueSlotKey(key), key);
  }
  for (const key of ["values", "valueType", "id", "version", "keyvalue", "count"]) {
    assert.ok(!isValueSlotKey(key), key);
  }
});

Deno.test("isCursorKey() knows pagination cursors and next-page links", () => {
  for (const key of ["startCursor", "endCursor", "next_cursor", "cursor", "nextPageToken", "next", "prev"]) {
    assert.ok(isCursorKey(key), key);
  }
  for (const key of ["hasNextPage", "title", "nextStep", "token"]) assert.ok(!isCursorKey(key), key);
});

Deno.test("mediaSwitches() reads boolean switches that add media from an input schema", () => {
  const schema = (properties: Record<string, unknown>) => ({ type: "object", properties });
  assert.deepEqual(mediaSwitches(schema({ includeImage: { type: "boolean" } })), ["image"]);
  assert.deepEqual(mediaSwitches(schema({ with_screenshot: { type: "boolean" } })), ["image"]);
  assert.deepEqual(mediaSwitches(schema({ attachAudio: { type: "boolean" } })), ["audio"]);
  assert.deepEqual(mediaSwitches(schema({ include_media: { type: "boolean" } })), ["image", "audio"]);
  // Not a boolean, not a switch, or no schema: nothing.
  assert.deepEqual(mediaSwitches(schema({ includeImage: { type: "string" } })), []);
  assert.deepEqual(mediaSwitches(schema({ removeBase64Images: { type: "boolean" } })), []);
  assert.deepEqual(mediaSwitches(schema({ media: { type: "string" } })), []);
  assert.deepEqual(mediaSwitches(undefined), []);
  assert.deepEqual(mediaSwitches(null), []);
});
