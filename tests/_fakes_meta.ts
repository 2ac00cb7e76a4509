/**
 * Test helpers for the meta-server and catalog tests: a temporary `SYMPOSIUM_HOME` with plugin
 * manifests, a temporary Cargo workspace, and a host-side stand-in for the sandbox (the
 * `ScriptRunner` seam) that runs a script as an async function with one global per server.
 *
 * @module
 */
import type { ScriptRunner } from "../lib/meta_server/mod.ts";
import { Catalog } from "../lib/catalog/mod.ts";
import { FIXTURE, REPO } from "./_fakes_backends.ts";

/** A temporary directory tree for one test: `home` (SYMPOSIUM_HOME) and `ws` (a Cargo workspace). */
export interface TestDirs {
  root: string;
  home: string;
  ws: string;
  remove(): Promise<void>;
}

/** The Cargo.toml of the test workspace, depending on `deps` (name → requirement). */
export function cargoToml(deps: Record<string, string>): string {
  const lines = Object.entries(deps).map(([n, v]) => `${n} = "${v}"`);
  return `[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n${
    lines.join("\n")
  }\n`;
}

/** The Cargo.lock for `deps` (name → locked version). */
export function cargoLock(deps: Record<string, string>): string {
  const pkgs = Object.entries(deps).map(([n, v]) => `[[package]]\nname = "${n}"\nversion = "${v}"\n`);
  return `version = 3\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\n\n${pkgs.join("\n")}`;
}

/** Creates `home` and a workspace depending on serde 1.0.219. */
export async function makeDirs(): Promise<TestDirs> {
  const root = await Deno.makeTempDir({ prefix: "symposium-test-" });
  const home = `${root}/home`;
  const ws = `${root}/ws`;
  await Deno.mkdir(`${home}/plugins`, { recursive: true });
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.writeTextFile(`${ws}/Cargo.toml`, cargoToml({ serde: "1" }));
  await Deno.writeTextFile(`${ws}/Cargo.lock`, cargoLock({ serde: "1.0.219" }));
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  return { root, home, ws, remove: () => Deno.remove(root, { recursive: true }) };
}

/**
 * The catalog of `dirs`' workspace with `dirs.home` as `SYMPOSIUM_HOME`, as `mcp-serve` opens it there.
 *
 * @param options More options of `Catalog.open` (a logger, a clock).
 */
export function openCatalog(
  dirs: Pick<TestDirs, "root" | "home" | "ws">,
  options: Partial<Parameters<typeof Catalog.open>[0]> = {},
): Promise<Catalog> {
  return Catalog.open({ cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home }, homeDir: dirs.root, ...options });
}

/** TOML for one `[[mcp_servers]]` entry running the fixture server with `flags`. */
export function fixtureServerToml(name: string, flags: string[] = [], extra = ""): string {
  const args = ["run", "-A", "--quiet", "--config", `${REPO}deno.json`, FIXTURE, `--name=${name}`, ...flags];
  return `[[mcp_servers]]\nname = "${name}"\ncommand = ${JSON.stringify(Deno.execPath())}\n` +
    `args = ${JSON.stringify(args)}\n${extra}\n`;
}

/** Writes `<home>/plugins/<plugin>/SYMPOSIUM.toml` with `body` after the plugin header. */
export async function writePlugin(
  home: string,
  plugin: string,
  body: string,
  dependsOn = '"*"',
): Promise<void> {
  await Deno.mkdir(`${home}/plugins/${plugin}`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/plugins/${plugin}/SYMPOSIUM.toml`,
    `name = "${plugin}"\ndepends-on = ${dependsOn}\n\n${body}`,
  );
}

const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor as new (
  ...args: string[]
) => (...args: unknown[]) => Promise<unknown>;

/** The host runner has no deadline to hold: holding it is a no-op. */
const NO_DEADLINE = { holdDeadline: () => () => {} };

/**
 * A stand-in for the QuickJS sandbox (tests only): the script body runs on the host as an async
 * function whose parameters are the server globals (proxies that call `hostCall`). Output: the
 * compact JSON of the value, then `\n[notice]` lines; a throw becomes a `script_error`.
 */
export const hostRunner: ScriptRunner = {
  async run({ script, namespaces, hostCall, notices, signal }) {
    const abort = new AbortController();
    signal?.addEventListener("abort", () => abort.abort(signal.reason), { once: true });
    const globals = namespaces.map((namespace) =>
      new Proxy({}, {
        get: (_t, key) =>
          typeof key === "string" && key !== "then"
            ? (args: unknown) => hostCall({ namespace, key, args }, abort.signal, NO_DEADLINE)
            : undefined,
      })
    );
    try {
      const value = await new AsyncFunction(...namespaces, script)(...globals);
      const lines = [JSON.stringify(value ?? null), ...notices().map((n) => `[${n}]`)];
      return { text: lines.join("\n"), isError: false };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { text: JSON.stringify({ error: "script_error", message }), isError: true };
    }
  },
};
