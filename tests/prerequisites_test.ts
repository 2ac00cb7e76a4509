/**
 * The system programs the tests drive are installed here; when one is missing, this test names every missing
 * one with the command that installs it (the tests that need it fail too, each with the same message, at once).
 *
 * @module
 */
import assert from "node:assert/strict";
import { isInstalled, missingMessage, PREREQUISITES, requireProgram } from "./_prerequisites.ts";

Deno.test("every system program the tests drive is installed (else: which, and the command that installs it)", () => {
  const missing = (Object.keys(PREREQUISITES) as (keyof typeof PREREQUISITES)[])
    .filter((name) => !isInstalled(PREREQUISITES[name].program))
    .map(missingMessage);
  assert.deepEqual(missing, [], `\n${missing.join("\n")}\n`);
});

Deno.test("a missing program fails at once, naming it and the command that installs it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prerequisites-" });
  try {
    await Deno.writeTextFile(`${dir}/tool`, "#!/bin/sh\n", { mode: 0o755 });
    await Deno.writeTextFile(`${dir}/data`, "", { mode: 0o644 });
    assert.equal(isInstalled("tool", `/nonexistent:${dir}`), true);
    assert.equal(isInstalled("data", dir), false, "a file that is not executable is not a program");
    assert.equal(isInstalled("tool", "/nonexistent"), false);
    assert.equal(isInstalled(`${dir}/tool`, ""), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  assert.equal(
    missingMessage("chromium"),
    "Cannot run this test: chromium (/usr/bin/chromium) is not installed; it is needed by " +
      "tests/auth/oauth_login_test.ts (the browser of the sign-in flow, driven headless). " +
      "Install it with `apt-get install chromium` (.ci/run does), then run the tests again",
  );
  const path = Deno.env.get("PATH");
  Deno.env.set("PATH", "/nonexistent");
  try {
    assert.throws(() => requireProgram("git"), {
      message: /git \(git\) is not installed.*`apt-get install git`/,
    });
  } finally {
    if (path === undefined) Deno.env.delete("PATH");
    else Deno.env.set("PATH", path);
  }
});
