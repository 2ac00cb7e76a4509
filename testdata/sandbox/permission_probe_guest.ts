// The guest's first step (revoke every permission, as `lib/sandbox/guest/main.ts` does before it reads a
// message), then an escaped script's attempts: each line says whether the operation was refused.
import { revokeAllPermissions } from "../../lib/sandbox/guest/main.ts";

revokeAllPermissions();
const attempts: Record<string, () => unknown> = {
  "Deno.readTextFile": () => Deno.readTextFile("/etc/hostname"),
  "Deno.writeTextFile": () => Deno.writeTextFile("/tmp/cargo-agents-guest-probe", "x"),
  "fetch": () => fetch("http://127.0.0.1:58000/"),
  "Deno.Command": () => new Deno.Command("/bin/true").output(),
  "Deno.env.get": () => Deno.env.get("HOME"),
  "Deno.connect": () => Deno.connect({ hostname: "127.0.0.1", port: 58000 }),
  "Deno.osRelease": () => Deno.osRelease(),
};
const results: Record<string, string> = {};
for (const [name, attempt] of Object.entries(attempts)) {
  try {
    await attempt();
    results[name] = "allowed";
  } catch (error) {
    results[name] = (error as Error).name;
  }
}
console.log(JSON.stringify(results));
