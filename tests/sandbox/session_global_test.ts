// The guest's side of `$session`: a fixed global whose methods are host calls of namespace `$session`.
import assert from "node:assert/strict";
import { runInEngine, valueOf as resultOf } from "../_fakes_sandbox.ts";

Deno.test("$session methods are host calls of namespace $session with { key, value } arguments", async () => {
  const kept = new Map<string, unknown>();
  const run = await runInEngine(
    `await $session.set("a", { n: 1n, list: [1, 2] });
     const back = await $session.get("a");
     const missing = await $session.get("b");
     return [back, missing === undefined, await $session.keys(), await $session.delete("a")];`,
    {
      hostCall: (req) => {
        const args = req.args as { key: string; value?: unknown } | undefined;
        if (req.key === "set") kept.set(args!.key, args!.value);
        if (req.key === "get") return Promise.resolve(kept.get(args!.key));
        if (req.key === "keys") return Promise.resolve([...kept.keys()]);
        if (req.key === "delete") return Promise.resolve(kept.delete(args!.key));
        return Promise.resolve(undefined);
      },
    },
  );
  assert.deepEqual(resultOf(run), [{ n: "1", list: [1, 2] }, true, ["a"], true]);
  assert.deepEqual(run.calls.map((c) => [c.namespace, c.key]), [
    ["$session", "set"],
    ["$session", "get"],
    ["$session", "get"],
    ["$session", "keys"],
    ["$session", "delete"],
  ]);
  assert.deepEqual(run.calls[0]!.args, { key: "a", value: { n: "1", list: [1, 2] } });
});

Deno.test("$session cannot be replaced or deleted by a script, and its methods reject with the host's error", async () => {
  const run = await runInEngine(
    `try { $session = 1 } catch (e) { }
     try { delete globalThis.$session } catch (e) { }
     const failed = await $session.set("k", 1).then(() => "kept", (e) => e.message);
     return [typeof $session.get, Object.isFrozen($session), failed];`,
    { hostCall: () => Promise.reject(new Error('Cannot set $session key "k": refused')) },
  );
  assert.deepEqual(resultOf(run), ["function", true, 'Cannot set $session key "k": refused']);
});

Deno.test("$session.set() of a value past what one value may hold is refused in the sandbox, naming the key", async () => {
  const run = await runInEngine(
    `return await $session.set("big", "x".repeat(9 * 1024 * 1024)).then(() => "sent", (e) => e.name + ": " + e.message);`,
  );
  assert.equal(
    resultOf(run),
    'RangeError: Cannot set $session key "big": its value is 9,437,186 bytes of JSON, more than the 8,388,608 ' +
      "bytes one value may hold; the key keeps its previous value",
  );
  assert.deepEqual(run.calls, []);
});

Deno.test("$session.get() calls go to the host one at a time, in order, each answered into the script", async () => {
  // A Promise.all of gets of one big value would otherwise have the host hold every reply at once.
  let inFlight = 0;
  let most = 0;
  const asked: string[] = [];
  const run = await runInEngine(
    `const got = await Promise.all(["a", "b", "c", "d"].map((k) => $session.get(k)));
     const failed = await Promise.all([$session.get("bad").catch((e) => e.message), $session.get("a")]);
     return [got, failed];`,
    {
      hostCall: async (req) => {
        const key = (req.args as { key: string }).key;
        asked.push(key);
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        if (key === "bad") throw new Error("no such key here");
        return key.toUpperCase();
      },
    },
  );
  assert.deepEqual(resultOf(run), [["A", "B", "C", "D"], ["no such key here", "A"]]);
  assert.equal(most, 1);
  assert.deepEqual(asked, ["a", "b", "c", "d", "bad", "a"]);
});
