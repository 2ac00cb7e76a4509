/**
 * `deno task bench:sources`: the cost of plugin sources (the goals in `docs/performance.md`, "Plugin sources"). A workspace with 20 registry
 * plugins (two path registries and one git registry's local copy), 5 trusted workspace plugins (the root
 * and 4 members) and 3 crate plugins (crates.io-shaped folders in a fake `CARGO_HOME`):
 *
 * - `cargo-agents status` as a process, warm (Deno's cache and the disk warm): goal ≤ 300 ms;
 * - the same resolution and report in-process (what the process adds to is start-up);
 * - `mcp-serve` process start → `initialize` answered with those 3 registries configured, beside the
 *   same home without them (interleaved rounds): goal not slower.
 *
 * Nothing here touches the network: the git registry is cloned from a bare repository on disk.
 * Environment: `BENCH_QUICK=1` (5 rounds instead of 15), `BENCH_OUT=path` (default
 * `bench/results/plugin_sources.json`).
 *
 * @module
 */
import { REPO } from "./_world.ts";
import { type Figure, loadAverage, statsOf, writeRoundsReport } from "./_perf_stats.ts";
import { sourceRunArgs } from "../lib/self_command.ts";
import { loadResolution } from "../lib/catalog/resolve.ts";
import { buildStatusReport } from "../lib/commands/status.ts";
import { denoFileSystem } from "../lib/file_system.ts";
import { renderTrustFile, sha256Hex, syncGitRegistry, trustKeyOf } from "../lib/plugin_sources/mod.ts";

const QUICK = Deno.env.get("BENCH_QUICK") === "1";
const ROUNDS = QUICK ? 5 : 15;
const OUT = Deno.env.get("BENCH_OUT") ?? `${REPO}bench/results/plugin_sources.json`;
const STATUS_GOAL_MS = 300;

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  const env = {
    GIT_AUTHOR_NAME: "b",
    GIT_AUTHOR_EMAIL: "b@x.invalid",
    GIT_COMMITTER_NAME: "b",
    GIT_COMMITTER_EMAIL: "b@x.invalid",
  };
  const out = await new Deno.Command("git", { args, cwd, env, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

const plugin = (name: string, gate: string) =>
  `name = "${name}"\ndepends-on = ${gate}\n\n[[mcp_servers]]\nname = "${name}-srv"\ncommand = "${name}-server"\nargs = ["--stdio"]\n`;

/** Builds the world; returns the two homes (with and without the registries) and the workspace. */
async function makeSourcesWorld(
  root: string,
): Promise<{ home: string; plainHome: string; ws: string; cargoHome: string }> {
  const home = `${root}/home`,
    plainHome = `${root}/plain-home`,
    ws = `${root}/ws`,
    cargoHome = `${root}/cargo`;
  const deps = ["serde", "tokio", "regex"];
  const gate = (i: number) => i % 4 === 3 ? '"*"' : `"${deps[i % 3]}"`;
  for (let i = 0; i < 7; i++) await write(`${root}/reg-a/a${i}/SYMPOSIUM.toml`, plugin(`a${i}`, gate(i)));
  for (let i = 0; i < 7; i++) {
    await write(`${root}/reg-b/nested/b${i}/SYMPOSIUM.toml`, plugin(`b${i}`, gate(i)));
  }
  for (let i = 0; i < 6; i++) await write(`${root}/git-src/c${i}/SYMPOSIUM.toml`, plugin(`c${i}`, gate(i)));
  await git(`${root}/git-src`, "init", "-q", "-b", "main");
  await git(`${root}/git-src`, "add", ".");
  await git(`${root}/git-src`, "commit", "-q", "-m", "plugins");
  await git(root, "clone", "-q", "--bare", `${root}/git-src`, `${root}/reg-c.git`);
  const crates = ["serde-mcp", "tokio-mcp", "regex-mcp"];
  const config = `[defaults]\nsymposium-recommendations = false\n\n` +
    `[[registry]]\nname = "reg-a"\npath = "${root}/reg-a"\n\n[[registry]]\nname = "reg-b"\npath = "${root}/reg-b"\n\n` +
    `[[registry]]\nname = "reg-c"\ngit = "file://${root}/reg-c.git"\n`;
  for (const h of [home, plainHome]) {
    await write(
      `${h}/plugins/chain/SYMPOSIUM.toml`,
      `name = "chain"\ndepends-on = "*"\n${
        crates.map((c) => `\n[[plugins]]\nsource.cargo = "${c}"\n`).join("")
      }`,
    );
  }
  await write(`${home}/config.toml`, config);
  await write(`${plainHome}/config.toml`, "[defaults]\nsymposium-recommendations = false\n");
  const sync = await syncGitRegistry({
    name: "reg-c",
    kind: "git",
    git: `file://${root}/reg-c.git`,
    autoUpdate: false,
  }, {
    configDir: home,
  });
  if (!sync.ok) throw new Error(sync.error);
  const members = ["m1", "m2", "m3", "m4"];
  await write(
    `${ws}/Cargo.toml`,
    `[workspace]\nmembers = [${
      members.map((m) => `"crates/${m}"`).join(", ")
    }]\n\n[workspace.dependencies]\n` +
      `${[...deps, ...crates].map((d) => `${d} = "1"`).join("\n")}\n`,
  );
  const lock = ["version = 3"];
  for (const m of members) {
    await write(
      `${ws}/crates/${m}/Cargo.toml`,
      `[package]\nname = "${m}"\nversion = "0.1.0"\n\n[dependencies]\n${
        [...deps, ...crates].map((d) => `${d}.workspace = true`).join("\n")
      }\n`,
    );
    await write(
      `${ws}/crates/${m}/SYMPOSIUM.toml`,
      `[[mcp_servers]]\nname = "${m}-tools"\ncommand = "${m}-server"\n`,
    );
    lock.push(
      `[[package]]\nname = "${m}"\nversion = "0.1.0"\ndependencies = [${
        [...deps, ...crates].map((d) => `"${d}"`).join(", ")
      }]`,
    );
  }
  await write(`${ws}/SYMPOSIUM.toml`, `[[mcp_servers]]\nname = "root-tools"\ncommand = "root-server"\n`);
  for (const d of [...deps, ...crates]) {
    lock.push(
      `[[package]]\nname = "${d}"\nversion = "1.0.1"\nsource = "registry+https://github.com/rust-lang/crates.io-index"`,
    );
  }
  await write(`${ws}/Cargo.lock`, lock.join("\n\n") + "\n");
  for (const c of crates) {
    const dir = `${cargoHome}/registry/src/index.crates.io-1949cf8c6b5b557f/${c}-1.0.1`;
    await write(`${dir}/Cargo.toml`, `[package]\nname = "${c}"\nversion = "1.0.1"\n`);
    await write(`${dir}/SYMPOSIUM.toml`, `[[mcp_servers]]\nname = "${c}-srv"\ncommand = "${c}-server"\n`);
  }
  const manifests = [`${ws}/SYMPOSIUM.toml`, ...members.map((m) => `${ws}/crates/${m}/SYMPOSIUM.toml`)];
  const entries = await Promise.all(manifests.map(async (f) => ({
    path: await trustKeyOf(f),
    sha256: await sha256Hex(await Deno.readTextFile(f)),
  })));
  for (const h of [home, plainHome]) await write(`${h}/trusted.toml`, renderTrustFile(entries));
  await Deno.chmod(`${home}/trusted.toml`, 0o600);
  await Deno.chmod(`${plainHome}/trusted.toml`, 0o600);
  return { home, plainHome, ws, cargoHome };
}

async function timeProcess(args: string[], env: Record<string, string>, cwd: string): Promise<number> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), { args, env, cwd, stdout: "null", stderr: "piped" })
    .output();
  const ms = performance.now() - t0;
  if (out.code > 1) throw new Error(new TextDecoder().decode(out.stderr));
  return ms;
}

async function timeInitialize(env: Record<string, string>, cwd: string): Promise<number> {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [...sourceRunArgs(REPO), "mcp-serve"],
    env,
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    }) + "\n",
  ));
  let ms = NaN;
  let buffer = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    if (buffer.includes("\n")) {
      ms = performance.now() - t0;
      break;
    }
  }
  await writer.close().catch(() => {}); // stdin closed: mcp-serve ends
  await child.status;
  return ms;
}

const root = await Deno.makeTempDir({ prefix: "bench-sources-" });
const figures: Figure[] = [];
const loadAtStart = loadAverage();
try {
  const world = await makeSourcesWorld(root);
  const env = (home: string) => ({
    ...Deno.env.toObject(),
    SYMPOSIUM_HOME: home,
    CARGO_HOME: world.cargoHome,
  });
  const check = await loadResolution({ cwd: world.ws, env: env(world.home), homeDir: root });
  const count = (pred: (source: string) => boolean) =>
    check.plugins.filter((p) => pred(p.source ?? "user-plugins")).length;
  const counts = {
    registry: count((s) => s.startsWith("reg-")),
    workspace: count((s) => s === "workspace"),
    crate: count((s) => s.startsWith("crate ")),
    serversInScope: check.resolution.servers.length,
  };
  if (counts.registry !== 20 || counts.workspace !== 5 || counts.crate !== 3) {
    throw new Error(`the world is not what it should be: ${JSON.stringify(counts)}`);
  }
  const run = [...sourceRunArgs(REPO), "status"];
  for (let i = 0; i < 2; i++) await timeProcess(run, env(world.home), world.ws); // warm
  const statusMs: number[] = [];
  const inProcessMs: number[] = [];
  const floorMs: number[] = [];
  const version = [...sourceRunArgs(REPO), "--version"];
  for (let i = 0; i < ROUNDS; i++) {
    statusMs.push(await timeProcess(run, env(world.home), world.ws));
    floorMs.push(await timeProcess(version, env(world.home), world.ws));
    const t0 = performance.now();
    const loaded = await loadResolution({ cwd: world.ws, env: env(world.home), homeDir: root });
    await buildStatusReport(loaded, denoFileSystem);
    inProcessMs.push(performance.now() - t0);
  }
  const status = statsOf(statusMs);
  figures.push({
    id: "status_28_plugins_warm",
    figure: "`status` process, 20 registry + 5 workspace + 3 crate plugins, warm",
    goal: `≤ ${STATUS_GOAL_MS} ms`,
    unit: "ms",
    floorLabel: "`cargo-agents --version` (the same process start, no command)",
    floor: statsOf(floorMs),
    ours: status,
    ratio: status.median / statsOf(floorMs).median,
    met: status.median <= STATUS_GOAL_MS,
  });
  const inProcess = statsOf(inProcessMs);
  figures.push({
    id: "status_28_plugins_in_process",
    figure: "the same resolution + status report, in-process",
    goal: "–",
    unit: "ms",
    ours: inProcess,
    met: true,
  });
  for (let i = 0; i < 2; i++) {
    await timeInitialize(env(world.home), world.ws);
    await timeInitialize(env(world.plainHome), world.ws);
  }
  const withSources: number[] = [];
  const without: number[] = [];
  // Twice the rounds, and the order alternates, so a burst of load hits both series alike.
  for (let i = 0; i < 2 * ROUNDS; i++) {
    if (i % 2 === 0) {
      withSources.push(await timeInitialize(env(world.home), world.ws));
      without.push(await timeInitialize(env(world.plainHome), world.ws));
    } else {
      without.push(await timeInitialize(env(world.plainHome), world.ws));
      withSources.push(await timeInitialize(env(world.home), world.ws));
    }
  }
  const w = statsOf(withSources), wo = statsOf(without);
  figures.push({
    id: "initialize_3_registries",
    figure: "`mcp-serve` start → `initialize` answered, with 3 registries configured",
    goal: "not slower than without",
    unit: "ms",
    floorLabel: "the same home without the registries",
    floor: wo,
    ours: w,
    ratio: w.median / wo.median,
    met: w.median <= wo.median * 1.05,
  });
  console.log(`plugins: ${JSON.stringify(counts)}`);
} finally {
  await Deno.remove(root, { recursive: true });
}
await writeRoundsReport(figures, { out: OUT, rounds: ROUNDS, loadAtStart, repoDir: REPO });
