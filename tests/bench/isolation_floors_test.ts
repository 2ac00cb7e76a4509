// The isolation floors' server and child (bench/_floor_server.ts, bench/_floor_guest.ts), run as
// `deno task bench:floors` runs them: each floor answers what the benchmark expects, and its child is launched
// exactly as the product launches its sandbox, so that a change of the sandbox's launch shows up here.
import { expect } from "expect";
import { guestLaunch } from "../../lib/sandbox/host/guest_launch.ts";
import { FloorChild, floorGuestLaunch } from "../../bench/_floor_server.ts";
import { FLOOR_HEAP_LIMIT_BYTES } from "../../bench/_floor_guest.ts";
import { connectBenchServer } from "../../bench/_world.ts";

Deno.test("the floor child is launched as the sandbox is, but for its module and arguments", () => {
  const product = guestLaunch({ heapLimitBytes: FLOOR_HEAP_LIMIT_BYTES });
  const floor = floorGuestLaunch(["--read=sync", "--quickjs=fresh"]);
  expect(floor.command).toBe(product.command);
  expect(floor.env).toEqual(product.env);
  const at = product.args.findIndex((a) => a.endsWith("lib/sandbox/guest/main.ts"));
  expect(floor.args.slice(0, at)).toEqual(product.args.slice(0, at));
  expect(floor.args.slice(at)).toEqual([
    new URL("../../bench/_floor_guest.ts", import.meta.url).pathname,
    "--read=sync",
    "--quickjs=fresh",
  ]);
  expect(floor.args.some((a) => /^--allow|^-A$|^-P$/.test(a))).toBe(false);
});

/** Each floor server's arguments and the text its `execute` answers. */
const FLOORS: [string[], string][] = [
  [[], "1"],
  [["--transport=sdk"], "1"],
  [["--child", "--read=async"], "1"],
  [["--child", "--read=sync", "--quickjs=fresh"], "1"],
  [["--child", "--read=sync", "--quickjs=reused"], "1"],
  [["--child", "--read=sync", "--calls=2"], "2"],
  [["--child", "--read=sync", "--quickjs=fresh", "--calls=3"], "3"],
  [["--child", "--read=sync", "--quickjs=fresh", "--calls=2", "--client=product"], "2"],
];

for (const [args, expected] of FLOORS) {
  Deno.test(`the floor server ${args.join(" ") || "(hop)"} answers execute with ${expected}, run after run`, async () => {
    const { client } = await connectBenchServer("bench/_floor_server.ts", args);
    try {
      for (let i = 0; i < 3; i++) {
        const result = await client.callTool({ name: "execute", arguments: {} });
        expect(result.isError).toBeFalsy();
        expect(result.content).toEqual([{ type: "text", text: expected }]);
      }
      const gc = await client.callTool({ name: "gc", arguments: {} });
      expect(gc.content).toEqual([{ type: "text", text: "gc" }]);
    } finally {
      await client.close();
    }
  });
}

Deno.test("a floor child spawned in process answers runs and its tool calls, and ends at close", async () => {
  const { promise: ended, resolve: end } = Promise.withResolvers<void>();
  const echo = (message: string) => Promise.resolve(`Echo: ${message}`);
  const child = new FloorChild(["--read=sync", "--quickjs=fresh"], echo, end);
  await child.ready();
  expect(await child.run(0)).toBe("1");
  expect(await child.run(2)).toBe("2");
  await child.close();
  await ended; // Its stdout ended: were it still running, the test would not end.
});
