import assert from "node:assert/strict";
import {
  answerSessionCall,
  SESSION_KEY_MAX_CHARS,
  SESSION_MAX_KEYS,
  SESSION_VALUE_MAX_BYTES,
  SessionStore,
} from "../../lib/meta_server/session_store.ts";
import { sessionDeclaration, sessionIndexLine } from "../../lib/meta_server/_session_listing.ts";

Deno.test("SessionStore.get() answers a copy of the value set, and undefined for a key never set", () => {
  const store = new SessionStore();
  const value = { files: [{ name: "a.rs", line: 3 }], done: false };
  store.set("todo", value);
  const back = store.get("todo") as typeof value;
  assert.deepEqual(back, value);
  back.files.push({ name: "b.rs", line: 1 });
  assert.equal((store.get("todo") as typeof value).files.length, 1);
  assert.equal(store.get("other"), undefined);
});

Deno.test("SessionStore counts UTF-8 bytes of each key and value JSON text, and a replaced key once", () => {
  const store = new SessionStore();
  store.set("k", "é"); // JSON "é" is 4 bytes, the key 1
  assert.equal(store.usedBytes, 5);
  store.set("k", [1, 2]);
  assert.equal(store.usedBytes, 1 + 5);
  store.set("n", null);
  assert.deepEqual(store.sizes(), [{ key: "k", bytes: 5 }, { key: "n", bytes: 4 }]);
  assert.equal(store.delete("k"), true);
  assert.equal(store.delete("k"), false);
  assert.equal(store.usedBytes, 5);
  assert.deepEqual(store.keys(), ["n"]);
});

Deno.test("SessionStore.keys() lists keys in the order they were last set", () => {
  const store = new SessionStore();
  store.set("a", 1);
  store.set("b", 2);
  store.set("a", 3);
  assert.deepEqual(store.keys(), ["b", "a"]);
});

Deno.test("SessionStore.set() past the store budget throws a RangeError naming key, size and limit, keeping the old value", () => {
  const store = new SessionStore({ maxStoreBytes: () => 100 });
  store.set("a", "x".repeat(50)); // 52 + 1
  assert.throws(
    () => store.set("a", "y".repeat(120)),
    (e: unknown) =>
      e instanceof RangeError &&
      e.message ===
        'Cannot set $session key "a": its value is 122 bytes of JSON, more than the 99 bytes left in the ' +
          "session store (0 of its 100 bytes are held by other keys, [mcp] session-store-mb = " +
          `${100 / 1024 / 1024}); the key keeps its previous value; delete keys you no longer need with ` +
          "$session.delete(key) or raise session-store-mb",
  );
  assert.equal(store.get("a"), "x".repeat(50));
  assert.equal(store.usedBytes, 53);
});

Deno.test("SessionStore.set() refuses a value over SESSION_VALUE_MAX_BYTES before the store budget", () => {
  const store = new SessionStore({ maxStoreBytes: () => 64 * 1024 * 1024 });
  assert.throws(
    () => store.set("big", "z".repeat(SESSION_VALUE_MAX_BYTES)),
    (e: unknown) =>
      e instanceof RangeError &&
      e.message ===
        'Cannot set $session key "big": its value is 8,388,610 bytes of JSON, more than the 8,388,608 bytes ' +
          "one value may hold; the key keeps its previous value",
  );
  assert.equal(store.size, 0);
});

Deno.test("SessionStore.set() refuses a new key past SESSION_MAX_KEYS; replacing a key still works", () => {
  const store = new SessionStore();
  for (let i = 0; i < SESSION_MAX_KEYS; i++) store.set(`k${i}`, i);
  assert.throws(() => store.set("one-more", 1), /holds 10000 keys, its most/);
  store.set("k0", "replaced");
  assert.equal(store.get("k0"), "replaced");
});

Deno.test("SessionStore refuses keys that are not 1 to 128 printable characters, naming them", () => {
  const store = new SessionStore();
  store.set("x".repeat(SESSION_KEY_MAX_CHARS), 1);
  const cases: [unknown, RegExp][] = [
    ["", /key "": a key is a string of 1 to 128 printable characters, this one has 0$/],
    ["x".repeat(129), /key "x{40}"…: .*this one has 129$/],
    ["tab\there", /key "tab\\there": .*control character/],
    ["line\u2028sep", /control character/],
    ["lone\ud800", /lone surrogate/],
    [7, /^Cannot get a \$session key: .*not number$/],
    [null, /not null$/],
  ];
  for (const [key, message] of cases) {
    assert.throws(() => store.get(key), (e: unknown) => e instanceof TypeError && message.test(e.message));
  }
  assert.throws(() => store.set("u", undefined), /the value is undefined, which has no JSON form/);
});

Deno.test("SessionStore.bindWorkspace() drops every value when the workspace changes, not before", () => {
  const store = new SessionStore();
  assert.equal(store.bindWorkspace("/ws/one"), 0);
  store.set("a", 1);
  store.set("b", 2);
  assert.equal(store.bindWorkspace("/ws/one"), 0);
  assert.equal(store.get("a"), 1);
  assert.equal(store.bindWorkspace("/ws/two"), 2);
  assert.deepEqual(store.keys(), []);
  assert.equal(store.usedBytes, 0);
});

Deno.test("answerSessionCall() dispatches get, set, delete and keys, and refuses another method", () => {
  const store = new SessionStore();
  assert.equal(answerSessionCall(store, { key: "set", args: { key: "a", value: [1] } }, "/ws"), undefined);
  assert.deepEqual(answerSessionCall(store, { key: "get", args: { key: "a" } }, "/ws"), [1]);
  assert.deepEqual(answerSessionCall(store, { key: "keys", args: undefined }, "/ws"), ["a"]);
  assert.equal(answerSessionCall(store, { key: "delete", args: { key: "a" } }, "/ws"), true);
  assert.throws(
    () => answerSessionCall(store, { key: "clear", args: undefined }, "/ws"),
    /\$session\.clear is not a method; \$session offers get\(key\), set\(key, value\), delete\(key\) and keys\(\)/,
  );
  answerSessionCall(store, { key: "set", args: { key: "a", value: 1 } }, "/ws");
  assert.equal(answerSessionCall(store, { key: "get", args: { key: "a" } }, "/elsewhere"), undefined);
});

Deno.test("sessionIndexLine() names the last 16 keys set with their sizes and counts the earlier ones", () => {
  const store = new SessionStore();
  assert.equal(sessionIndexLine(store, "/ws"), "");
  for (let i = 0; i < 20; i++) store.set(`key${i}`, "v".repeat(i * 100));
  const line = sessionIndexLine(store, "/ws");
  assert.match(
    line,
    /^\$session \(20 keys, 18\.7 KB of 64\.0 MB\): 4 earlier keys, then "key4" 402 B, "key5" 502 B/,
  );
  assert.match(line, /"key19" 1\.9 KB — read with await \$session\.get\(key\)$/);
  assert.ok(!line.includes("vvv"));
});

Deno.test("sessionDeclaration() declares the four methods and says what the store holds", () => {
  const store = new SessionStore();
  store.set("a", 1);
  const text = sessionDeclaration(store);
  assert.match(text, /Now 1 key, 2 B of 64\.0 MB\. A value is at most 8\.0 MB of JSON/);
  for (
    const line of ["get(key: string): Promise<unknown>;", "set(key: string, value: unknown): Promise<void>;"]
  ) {
    assert.ok(text.includes(line), line);
  }
  assert.ok(text.includes("delete(key: string): Promise<boolean>;"));
  assert.ok(text.includes("keys(): Promise<string[]>;"));
});
