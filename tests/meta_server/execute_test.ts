import assert from "node:assert/strict";
import {
  extractMedia,
  namedServers,
  startNamedServers,
  toolArguments,
} from "../../lib/meta_server/execute.ts";
import { MAX_CALLS_IN_FLIGHT_PER_SERVER } from "../../lib/backends/pool.ts";
import { waitFor } from "../_fakes_backends.ts";
import { fixtureServerToml, writePlugin } from "../_fakes_meta.ts";
import { execute, harness, textOf } from "./_harness.ts";

Deno.test("execute resolves tolerant spellings, unwraps results and surfaces tool errors", async () => {
  const h = await harness((d) => writePlugin(d.home, "you", fixtureServerToml("you")));
  const result = await execute(
    h,
    `const a = await you.you_search({query: 'q'}); const b = await you.youSearch({query: 'q'});
     const items = await you.json_text(); let err; try { await you.fail({message: 'nope'}) } catch (e) { err = e.message }
     const v = await you.echo_args(7);
     return [a.results.web.length, b.results.web.length, items.filter(i => i.id > 1).length, err, v];`,
  );
  assert.equal(result.text, '[1,1,2,"you.fail: nope",{"value":7}]');
  await h.close();
});

Deno.test("execute tags an off-shape result once per tool and passes it through", async () => {
  const h = await harness((d) => writePlugin(d.home, "bricks", fixtureServerToml("bricks")));
  const result = await execute(
    h,
    "const a = await bricks.lies(); const b = await bricks.lies(); return [a, b, await bricks.structured()]",
  );
  assert.equal(
    result.text,
    '["count: 7","count: 7",{"total":2,"items":["a","b"]}]\n[bricks.lies: result off-shape, treat as unknown]',
  );
  await h.close();
});

Deno.test("execute names the closest tool for an unknown key", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const result = await execute(h, "return await fx.ecoh({message: 'x'})");
  assert.equal(result.isError, true);
  assert.match(result.text, /`fx` has no tool `ecoh`\. Closest match: `echo`\./);
  await h.close();
});

Deno.test("execute sees a tool that the server added mid-script after tools/list_changed", async () => {
  const h = await harness((d) => writePlugin(d.home, "dyn", fixtureServerToml("dyn")));
  const result = await execute(h, "await dyn.enable_b({}); return await dyn.b({})");
  assert.equal(result.text, '"B-OK"');
  assert.ok(h.notifications.includes("tools/list_changed"));
  await h.close();
});

Deno.test("execute reports calls completed as progress, naming each tool, when the agent asks for it", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const seen: { progress: number; message?: string | undefined }[] = [];
  const result = await h.client.callTool(
    {
      name: "execute",
      arguments: {
        script:
          "await fx.echo({message: 'a'}); try { await fx.fail({}) } catch {} return await fx.echo({message: 'b'})",
      },
    },
    { onprogress: (p) => seen.push({ progress: p.progress, message: p.message }) },
  );
  assert.equal(textOf(result), '"b"');
  assert.deepEqual(seen, [
    { progress: 1, message: "fx.echo done (1 call completed)" },
    { progress: 2, message: "fx.fail failed (2 calls completed)" },
    { progress: 3, message: "fx.echo done (3 calls completed)" },
  ]);
  await h.close();
});

Deno.test("execute forwards a backing server's progress for its calls, always increasing", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const seen: { progress: number; message?: string | undefined }[] = [];
  const result = await h.client.callTool(
    {
      name: "execute",
      arguments: { script: "await fx.echo({message: 'a'}); return await fx.sleep({ms: 300})" },
    },
    { onprogress: (p) => seen.push({ progress: p.progress, message: p.message }) },
  );
  assert.equal(textOf(result), '"SLOW-OK"');
  // The server's last report races its own response inside the SDK client (the response wins and
  // drops the progress handler), so "300/300" may or may not be forwarded.
  const shown = seen.filter((p) => p.message !== "fx.sleep: 300/300");
  assert.deepEqual(shown.map((p) => p.message), [
    "fx.echo done (1 call completed)",
    "fx.sleep: 100/300",
    "fx.sleep: 200/300",
    "fx.sleep done (2 calls completed)",
  ]);
  assert.deepEqual(shown.map((p) => Math.round(p.progress * 100) / 100), [1, 1.33, 1.67, 2]);
  assert.ok(seen.every((p, i) => i === 0 || p.progress > seen[i - 1]!.progress), JSON.stringify(seen));
  await h.close();
});

Deno.test("execute sends no progress when the agent did not ask for it", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  await execute(h, "return await fx.sleep({ms: 200})");
  assert.ok(!h.notifications.includes("notifications/progress"), h.notifications.join(", "));
  await h.close();
});

Deno.test("execute runs calls under Promise.all at most 32 at a time per server, and all 100 complete", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("fx"));
    await writePlugin(d.home, "other", fixtureServerToml("other"));
  });
  const result = await execute(
    h,
    `const calls = [];
     for (let i = 0; i < 100; i++) calls.push(fx.sleep({ms: 200}));
     for (let i = 0; i < 10; i++) calls.push(other.sleep({ms: 200}));
     const done = await Promise.all(calls);
     return [done.filter((d) => d === "SLOW-OK").length, (await fx.stats()).maxInFlight,
       (await other.stats()).maxInFlight];`,
  );
  const [completed, fxPeak, otherPeak] = JSON.parse(result.text) as number[];
  assert.equal(completed, 110);
  // 100 queued calls keep fx saturated (each lasts 200 ms, longer than dispatching 32 takes even on a loaded
  // machine), so its peak is the bound; `other`'s 10 calls may finish before the last arrive, so its peak
  // only has to respect the bound and show concurrency.
  assert.equal(fxPeak, MAX_CALLS_IN_FLIGHT_PER_SERVER);
  assert.ok(otherPeak! >= 2 && otherPeak! <= MAX_CALLS_IN_FLIGHT_PER_SERVER, `other peaked at ${otherPeak}`);
  await h.close();
});

Deno.test("execute honours [mcp] max-calls-in-flight-per-server", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("fx"));
    await Deno.writeTextFile(`${d.home}/config.toml`, "[mcp]\nmax-calls-in-flight-per-server = 3\n");
  });
  const result = await execute(
    h,
    `await Promise.all(Array.from({ length: 12 }, () => fx.sleep({ms: 40})));
     return (await fx.stats()).maxInFlight;`,
  );
  assert.equal(result.text, "3");
  await h.close();
});

Deno.test("execute cancelled by the agent cancels its in-flight backing calls and the session keeps serving", async () => {
  const h = await harness((d) =>
    writePlugin(d.home, "fx", fixtureServerToml("fx", [`--calls-file=${d.root}/calls`]))
  );
  const callsFile = `${h.dirs.root}/calls`;
  const pid = (await execute(h, "return (await fx.pid()).pid")).text;
  const abort = new AbortController();
  const pending = h.client.callTool(
    { name: "execute", arguments: { script: "await Promise.all([fx.hang({}), fx.hang({})]); return 1" } },
    { signal: abort.signal },
  );
  const hangs = async () =>
    (await Deno.readTextFile(callsFile)).split("\n").filter((l) => l === "hang").length;
  assert.ok(await waitFor(async () => await hangs() === 2), "the two hanging calls never reached the server");
  abort.abort("the user pressed Escape");
  await assert.rejects(pending);
  const after = await execute(h, "return [(await fx.pid()).pid, (await fx.stats()).cancelled]");
  assert.equal(after.text, `[${pid},2]`);
  await h.close();
});

Deno.test("toolArguments() sends {} for nothing and wraps non-objects", () => {
  assert.deepEqual(toolArguments(undefined), {});
  assert.deepEqual(toolArguments(null), {});
  assert.deepEqual(toolArguments({ a: 1 }), { a: 1 });
  assert.deepEqual(toolArguments([1]), { value: [1] });
  assert.deepEqual(toolArguments("x"), { value: "x" });
});

Deno.test("extractMedia() hands on image and audio blocks with a media type and base64 data", () => {
  const value = {
    a: { type: "image", mimeType: "image/svg+xml", data: "PHN2Zz4=" },
    b: [{ type: "audio", mimeType: "audio/wav", data: "UklGRg" }],
  };
  const { value: replaced, blocks, problem } = extractMedia(value);
  assert.equal(problem, undefined);
  assert.deepEqual(blocks.map((b) => b.mimeType), ["image/svg+xml", "audio/wav"]);
  assert.deepEqual(replaced, {
    a: { type: "image", mimeType: "image/svg+xml", attachment: 1 },
    b: [{ type: "audio", mimeType: "audio/wav", attachment: 2 }],
  });
});

Deno.test("extractMedia() refuses a block whose mimeType is not image/* or audio/*, naming where it is", () => {
  const cases: [unknown, RegExp][] = [
    [
      { shot: { type: "image", mimeType: "text/html\r\nX-Evil: 1", data: "AAAA" } },
      /^the image block at result\.shot has mimeType "text\/html\\r\\nX-Evil: 1"; an image block needs mimeType image\/<type>, e.g\. image\/png$/,
    ],
    [
      [{ type: "audio", mimeType: "image/png", data: "AAAA" }],
      /^the audio block at result\[0\] has mimeType "image\/png"; an audio block needs mimeType audio\/<type>/,
    ],
    [
      { x: { type: "image", mimeType: "image/png/x", data: "AAAA" } },
      /at result\.x has mimeType "image\/png\/x"/,
    ],
    [{ x: { type: "image", data: "AAAA" } }, /at result\.x has mimeType no string \(undefined\)/],
  ];
  for (const [value, expected] of cases) {
    const out = extractMedia(value);
    assert.match(out.problem ?? "", expected);
    assert.deepEqual(out.blocks, []);
  }
});

Deno.test("extractMedia() refuses a block whose data is empty or not base64", () => {
  for (const data of ["", "not base64!", "AAAAA", "AA=A", 42]) {
    const out = extractMedia({ "my shot": { type: "image", mimeType: "image/png", data } });
    assert.match(
      out.problem ?? "",
      /^the image block at result\["my shot"\] has (no data|data that is not base64)/,
      String(data),
    );
  }
});

Deno.test("startNamedServers() lists a named server's tools until it runs with them listed, then leaves it alone", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("fx"));
    await writePlugin(d.home, "other", fixtureServerToml("other"));
  });
  try {
    const listed: string[] = [];
    const list = h.catalog.listServerTools.bind(h.catalog);
    h.catalog.listServerTools = (spec, options) => (listed.push(spec.name), list(spec, options));
    const fx = h.catalog.serverByName("fx")!;
    assert.equal(h.catalog.hasListedTools(fx), false);
    startNamedServers(h.catalog, "return await fx.echo({ text: 'a' })");
    assert.deepEqual(listed, ["fx"], "a server not running is started early");
    assert.ok(await waitFor(() => Promise.resolve(h.catalog.hasListedTools(fx)), 10_000));
    startNamedServers(h.catalog, "await other.echo({}); return await fx.echo({ text: 'b' })");
    assert.deepEqual(listed, ["fx", "other"], "a running server with its tools listed was listed again");
    assert.equal((await execute(h, "return (await fx.echo({ text: 'c' })) !== undefined")).text, "true");
  } finally {
    await h.close();
  }
});

Deno.test("namedServers() finds the servers a script uses as objects, by their globals", () => {
  const spec = (name: string) =>
    ({ name }) as unknown as import("../../lib/plugins/server_spec.ts").ServerSpec;
  const catalog = { servers: [spec("fx"), spec("my-tools"), spec("other"), spec("$x")] };
  const names = (script: string) => namedServers(catalog, script).map((s) => s.name);
  assert.deepEqual(names("await fx.echo({}); return my_tools['a'] ?? $x?.b"), ["fx", "my-tools", "$x"]);
  assert.deepEqual(names("const xfx = 1; a.fx.b(); other; myfx.echo()"), []);
  assert.deepEqual(names("// other.thing is not called\nreturn 1"), ["other"]);
});
