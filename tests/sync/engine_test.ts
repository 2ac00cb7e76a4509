import assert from "node:assert/strict";
import type { CommandContext } from "../../lib/commands/context.ts";
import { UsageError, UserError } from "../../lib/diagnostics.ts";
import { runSync } from "../../lib/commands/sync.ts";
import { renderSyncReport } from "../../lib/sync/report.ts";
import { syncAgents, type SyncOutcome, type SyncRequest } from "../../lib/sync/sync_agents.ts";
import { denoWritableFileSystem } from "../../lib/sync/writable_file_system.ts";
import { FIXED_SERVER, linuxPaths } from "../_fakes_sync.ts";
import { AGENTS } from "../../lib/sync/agents/mod.ts";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";

const REGISTER: SyncRequest = { agents: [], project: false, dryRun: false, remove: false };

async function withHome(fn: (home: string) => Promise<void>): Promise<void> {
  const home = await Deno.makeTempDir();
  try {
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

function sync(
  home: string,
  request: Partial<SyncRequest> = {},
  env: Record<string, string> = {},
  cwd = home,
) {
  const paths = { ...linuxPaths(home, { PATH: "/nonexistent", ...env }), cwd };
  return syncAgents({ ...REGISTER, ...request }, { paths, server: FIXED_SERVER });
}

function rows(outcomes: SyncOutcome[]): string[][] {
  return outcomes.filter((o) => o.status !== "skipped").map((o) => [o.agent, o.status, o.detail]);
}

Deno.test("syncAgents() writes only the detected agents and says why the others were skipped", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.cursor`);
    Deno.mkdirSync(`${home}/.codex`);
    const outcomes = await sync(home);
    assert.deepEqual(rows(outcomes), [
      ["cursor", "written", "created the file"],
      ["codex", "written", "created the file"],
    ]);
    const windsurf = outcomes.find((o) => o.agent === "windsurf")!;
    assert.deepEqual([windsurf.status, windsurf.detail], [
      "skipped",
      "not detected (no ~/.codeium/windsurf, no windsurf on PATH)",
    ]);
    assert.equal(outcomes.length, AGENTS.length);
    assert.ok(
      Deno.readTextFileSync(`${home}/.codex/config.toml`).includes(
        'command = "/opt/cargo-agents/bin/cargo-agents"',
      ),
    );
  });
});

Deno.test("syncAgents() detects an agent by its program on PATH", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/bin`);
    Deno.writeTextFileSync(`${home}/bin/gemini`, "#!/bin/sh\n");
    Deno.chmodSync(`${home}/bin/gemini`, 0o755);
    const outcomes = await sync(home, {}, { PATH: `${home}/bin` });
    assert.deepEqual(rows(outcomes), [["gemini", "written", "created the file"]]);
  });
});

Deno.test("syncAgents() creates the missing folder and file of a named agent, then changes nothing", async () => {
  await withHome(async (home) => {
    const first = await sync(home, { agents: ["kiro"] });
    assert.deepEqual(rows(first), [["kiro", "written", "created the file"]]);
    const path = `${home}/.kiro/settings/mcp.json`;
    const bytes = Deno.readTextFileSync(path);
    const mtime = Deno.statSync(path).mtime;
    const second = await sync(home, { agents: ["kiro"] });
    assert.deepEqual(rows(second), [["kiro", "unchanged", "already registered"]]);
    assert.equal(Deno.readTextFileSync(path), bytes);
    assert.deepEqual(Deno.statSync(path).mtime, mtime);
    assert.deepEqual([...Deno.readDirSync(`${home}/.kiro/settings`)].map((e) => e.name), ["mcp.json"]);
  });
});

Deno.test("syncAgents() leaves a malformed file untouched, reports where, and carries on", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.cursor`);
    Deno.mkdirSync(`${home}/.config/zed`, { recursive: true });
    const broken = '{\n  "theme": "One Dark"\n  "vim_mode": true\n}\n';
    Deno.writeTextFileSync(`${home}/.config/zed/settings.json`, broken);
    const outcomes = await sync(home);
    const zed = outcomes.find((o) => o.agent === "zed")!;
    assert.equal(zed.status, "error");
    assert.equal(zed.error?.code, "SYNC_CONFIG_SYNTAX");
    assert.deepEqual(zed.error?.location, { file: `${home}/.config/zed/settings.json`, line: 3, column: 3 });
    assert.equal(Deno.readTextFileSync(`${home}/.config/zed/settings.json`), broken);
    assert.deepEqual([...Deno.readDirSync(`${home}/.config/zed`)].map((e) => e.name), ["settings.json"]);
    assert.equal(outcomes.find((o) => o.agent === "cursor")!.status, "written");
  });
});

Deno.test("syncAgents() leaves a config file that is not UTF-8 untouched and says where", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.cursor`);
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{\n  "x": "caf'),
      0xe9,
      ...new TextEncoder().encode('"\n}\n'),
    ]);
    Deno.writeFileSync(`${home}/.cursor/mcp.json`, bytes);
    const [cursor] = await sync(home, { agents: ["cursor"] });
    assert.equal(cursor!.status, "error");
    assert.equal(cursor!.error?.code, "FILE_NOT_UTF8");
    assert.deepEqual(cursor!.error?.location, { file: `${home}/.cursor/mcp.json`, line: 2, column: 12 });
    assert.deepEqual(Deno.readFileSync(`${home}/.cursor/mcp.json`), bytes);
  });
});

Deno.test("syncAgents() replaces a stale entry and keeps a .bak of the previous file", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.gemini`);
    const before = '{\n  "mcpServers": {\n    "symposium": { "command": "old" }\n  }\n}\n';
    Deno.writeTextFileSync(`${home}/.gemini/settings.json`, before);
    const outcomes = await sync(home, { agents: ["gemini"] });
    assert.deepEqual(rows(outcomes), [["gemini", "written", "replaced a stale entry"]]);
    assert.equal(outcomes[0]!.backupPath, `${home}/.gemini/settings.json.bak`);
    assert.equal(Deno.readTextFileSync(`${home}/.gemini/settings.json.bak`), before);
  });
});

Deno.test("syncAgents() keeps the user's env and other settings when it replaces a stale entry", async () => {
  await withHome(async (home) => {
    const stale = {
      mcpServers: {
        symposium: {
          command: "/old/path/cargo-agents",
          args: ["mcp-serve"],
          env: { RUST_LOG: "debug" },
          timeout: 30,
        },
      },
    };
    Deno.writeTextFileSync(`${home}/.claude.json`, JSON.stringify(stale, null, 2) + "\n");
    const outcomes = await sync(home, { agents: ["claude-code"] });
    assert.deepEqual(rows(outcomes), [["claude-code", "written", "replaced a stale entry"]]);
    assert.deepEqual(JSON.parse(Deno.readTextFileSync(`${home}/.claude.json`)).mcpServers.symposium, {
      type: "stdio",
      command: "/opt/cargo-agents/bin/cargo-agents",
      args: ["mcp-serve"],
      env: { RUST_LOG: "debug" },
      timeout: 30,
    });
    assert.deepEqual(rows(await sync(home, { agents: ["claude-code"] })), [
      ["claude-code", "unchanged", "already registered"],
    ]);
  });
});

Deno.test("syncAgents() keeps the user's env in Codex TOML and Goose YAML entries", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.codex`);
    Deno.writeTextFileSync(
      `${home}/.codex/config.toml`,
      '[mcp_servers.symposium]\ncommand = "old"\nargs = ["mcp-serve"]\n\n[mcp_servers.symposium.env]\nRUST_LOG = "debug"\n',
    );
    Deno.mkdirSync(`${home}/.config/goose`, { recursive: true });
    Deno.writeTextFileSync(
      `${home}/.config/goose/config.yaml`,
      "extensions:\n  symposium:\n    cmd: old\n    args: [mcp-serve]\n    envs:\n      RUST_LOG: debug\n    timeout: 60\n",
    );
    const outcomes = await sync(home, { agents: ["codex", "goose"] });
    assert.deepEqual(rows(outcomes), [
      ["codex", "written", "replaced a stale entry"],
      ["goose", "written", "replaced a stale entry"],
    ]);
    const codex = parseToml(Deno.readTextFileSync(`${home}/.codex/config.toml`)) as {
      mcp_servers: { symposium: unknown };
    };
    assert.deepEqual(JSON.parse(JSON.stringify(codex.mcp_servers.symposium)), {
      command: "/opt/cargo-agents/bin/cargo-agents",
      args: ["mcp-serve"],
      startup_timeout_sec: 30,
      tool_timeout_sec: 150,
      env: { RUST_LOG: "debug" },
    });
    const goose = parseYaml(Deno.readTextFileSync(`${home}/.config/goose/config.yaml`)) as {
      extensions: { symposium: Record<string, unknown> };
    };
    assert.deepEqual(goose.extensions.symposium.envs, { RUST_LOG: "debug" });
    assert.equal(goose.extensions.symposium.timeout, 60);
    assert.equal(goose.extensions.symposium.cmd, "/opt/cargo-agents/bin/cargo-agents");
  });
});

Deno.test("syncAgents() with dryRun diffs each file and writes nothing", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.cursor`);
    Deno.writeTextFileSync(`${home}/.cursor/mcp.json`, '{\n  "mcpServers": {}\n}\n');
    const outcomes = await sync(home, { agents: ["cursor", "windsurf"], dryRun: true });
    assert.deepEqual(rows(outcomes), [
      ["cursor", "written", "added the entry"],
      ["windsurf", "written", "created the file"],
    ]);
    assert.equal(
      outcomes[0]!.diff,
      `--- ${home}/.cursor/mcp.json\n+++ ${home}/.cursor/mcp.json\n@@ -1,3 +1,8 @@\n {\n-  "mcpServers": {}\n` +
        '+  "mcpServers": {\n+    "symposium": {\n+      "command": "/opt/cargo-agents/bin/cargo-agents",\n' +
        '+      "args": ["mcp-serve"]\n+    }\n+  }\n }\n',
    );
    assert.match(outcomes[1]!.diff!, /^--- \/dev\/null\n/);
    assert.equal(Deno.readTextFileSync(`${home}/.cursor/mcp.json`), '{\n  "mcpServers": {}\n}\n');
    assert.equal(Deno.statSync(`${home}/.cursor`).isDirectory, true);
    assert.throws(() => Deno.statSync(`${home}/.codeium`), Deno.errors.NotFound);
  });
});

Deno.test("syncAgents() with remove takes out only the entry, wherever a file has one", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.codex`);
    const before = '# mine\nmodel = "o3"\n';
    Deno.writeTextFileSync(`${home}/.codex/config.toml`, before);
    await sync(home, { agents: ["codex"] });
    const outcomes = await sync(home, { remove: true });
    assert.deepEqual(rows(outcomes).filter((r) => r[1] !== "unchanged"), [[
      "codex",
      "removed",
      "removed the entry",
    ]]);
    assert.equal(Deno.readTextFileSync(`${home}/.codex/config.toml`), before);
    const again = await sync(home, { remove: true, agents: ["codex", "cursor"] });
    assert.deepEqual(rows(again), [["codex", "unchanged", "no symposium entry"], [
      "cursor",
      "unchanged",
      "no config file",
    ]]);
  });
});

Deno.test("syncAgents() with project writes in the Cargo workspace root and skips agents without project files", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/ws/crates/app/src`, { recursive: true });
    Deno.writeTextFileSync(`${home}/ws/Cargo.toml`, '[workspace]\nmembers = ["crates/*"]\n');
    Deno.writeTextFileSync(`${home}/ws/crates/app/Cargo.toml`, '[package]\nname = "app"\n');
    const outcomes = await sync(
      home,
      { agents: ["claude-code", "goose"], project: true },
      {},
      `${home}/ws/crates/app/src`,
    );
    assert.deepEqual(outcomes.map((o) => [o.agent, o.status, o.file ?? o.detail]), [
      ["claude-code", "written", `${home}/ws/.mcp.json`],
      ["goose", "skipped", "has no project-level config file"],
    ]);
  });
});

Deno.test("syncAgents() with project refuses outside a Cargo workspace and writes nothing", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/scratch`);
    const error = await sync(home, { agents: ["cursor"], project: true }, {}, `${home}/scratch`).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof UserError);
    assert.equal(error.code, "SYNC_NO_WORKSPACE");
    assert.match(error.message, /not inside a Cargo workspace/);
    assert.match(error.hint ?? "", /inside the Rust workspace/);
    assert.deepEqual([...Deno.readDirSync(`${home}/scratch`)], []);
    assert.deepEqual([...Deno.readDirSync(home)].map((e) => e.name), ["scratch"]);
  });
});

Deno.test("syncAgents() rejects an unknown agent before touching anything", async () => {
  await withHome(async (home) => {
    await assert.rejects(() => sync(home, { agents: ["cursor", "windsurff"] }), UsageError);
    assert.deepEqual([...Deno.readDirSync(home)], []);
  });
});

Deno.test("renderSyncReport() prints one aligned row per file and a count", () => {
  const base = { diff: undefined, backupPath: undefined, error: undefined };
  const text = renderSyncReport([
    {
      ...base,
      agent: "cursor",
      agentName: "Cursor",
      status: "written",
      file: "/h/.cursor/mcp.json",
      detail: "added the entry",
    },
    {
      ...base,
      agent: "windsurf",
      agentName: "Windsurf",
      status: "skipped",
      file: undefined,
      detail: "not detected",
    },
    {
      ...base,
      agent: "codex",
      agentName: "Codex CLI",
      status: "unchanged",
      file: "/h/.codex/config.toml",
      detail: "already registered",
    },
  ], { homeDir: "/h", dryRun: true });
  assert.equal(
    text,
    [
      "agent      result       details",
      "Cursor     would write  ~/.cursor/mcp.json (added the entry)",
      "Windsurf   skipped      not detected",
      "Codex CLI  unchanged    ~/.codex/config.toml (already registered)",
      "",
      "1 would write, 1 unchanged, 1 skipped (dry run: nothing was written)",
      "",
    ].join("\n"),
  );
});

function fakeContext(
  home: string,
  env: Record<string, string> = {},
): CommandContext & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    env: { HOME: home, PATH: "/nonexistent", ...env },
    cwd: home,
    homeDir: home,
    execPath: "/usr/bin/cargo-agents",
    selfCommand: { command: "/usr/bin/cargo-agents", args: [] },
    verbose: false,
    writeOut: (t) => void out.push(t),
    writeErr: (t) => void err.push(t),
    signal: new AbortController().signal,
    out,
    err,
  };
}

Deno.test("runSync() registers the running program with mcp-serve and exits 0", async () => {
  await withHome(async (home) => {
    const ctx = fakeContext(home);
    const code = await runSync({ agents: ["windsurf"], project: false, dryRun: false, remove: false }, ctx);
    assert.equal(code, 0);
    assert.deepEqual(JSON.parse(Deno.readTextFileSync(`${home}/.codeium/windsurf/mcp_config.json`)), {
      mcpServers: { symposium: { command: "/usr/bin/cargo-agents", args: ["mcp-serve"] } },
    });
    assert.equal(
      ctx.out.join(""),
      "agent     result   details\nWindsurf  written  ~/.codeium/windsurf/mcp_config.json (created the file)\n\n1 written\n",
    );
    assert.deepEqual(ctx.err, []);
  });
});

Deno.test("runSync() exits 1 and prints the positioned diagnostic when a file is malformed", async () => {
  await withHome(async (home) => {
    Deno.writeTextFileSync(`${home}/.claude.json`, '{"a": 1,}');
    const ctx = fakeContext(home);
    const code = await runSync(
      { agents: ["claude-code"], project: false, dryRun: false, remove: false },
      ctx,
    );
    assert.equal(code, 1);
    assert.match(
      ctx.out.join(""),
      /Claude Code {2}error +~\/\.claude\.json:1:8 \(invalid JSON: trailing commas/,
    );
    assert.equal(
      ctx.err.join(""),
      `error[SYNC_CONFIG_SYNTAX]: Cannot read "${home}/.claude.json": invalid JSON: trailing commas are not allowed: ` +
        `the agent reads this file as strict JSON\n  --> ${home}/.claude.json:1:8\n` +
        "  hint: fix the file by hand (it was left untouched), then run `cargo-agents sync` again\n" +
        "  see: cargo agents help SYNC_CONFIG_SYNTAX (docs/troubleshooting.md#sync_config_syntax)\n",
    );
    assert.equal(Deno.readTextFileSync(`${home}/.claude.json`), '{"a": 1,}');
  });
});

Deno.test("runSync() says how to name an agent when none is detected", async () => {
  await withHome(async (home) => {
    const ctx = fakeContext(home);
    assert.equal(await runSync({ agents: [], project: false, dryRun: false, remove: false }, ctx), 0);
    assert.match(ctx.out.join(""), /No agent detected: name one with --agent NAME/);
  });
});

Deno.test("syncAgents() refuses a FIFO by name without opening it, and writes the other agents", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.cursor`);
    const mk = await new Deno.Command("mkfifo", { args: [`${home}/.cursor/mcp.json`] }).output();
    assert.equal(mk.code, 0);
    const outcomes = await sync(home, { agents: ["cursor", "windsurf"] });
    assert.deepEqual(outcomes.map((o) => [o.agent, o.status, o.error?.code]), [
      ["cursor", "error", "SYNC_NOT_A_FILE"],
      ["windsurf", "written", undefined],
    ]);
    assert.equal(
      outcomes[0]!.detail,
      `Cannot read "${home}/.cursor/mcp.json": it is a FIFO (named pipe), not a regular file`,
    );
    assert.ok(Deno.lstatSync(`${home}/.cursor/mcp.json`).isFifo);
  });
});

Deno.test("syncAgents() reports a file nested too deep for that agent only", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.gemini`);
    const deep = '{"mcpServers": {}, "x": ' + "[".repeat(100_000) + "]".repeat(100_000) + "}\n";
    Deno.writeTextFileSync(`${home}/.gemini/settings.json`, deep);
    Deno.mkdirSync(`${home}/.codex`);
    Deno.writeTextFileSync(
      `${home}/.codex/config.toml`,
      "x = " + "[".repeat(100_000) + "]".repeat(100_000) + "\n",
    );
    Deno.mkdirSync(`${home}/.config/goose`, { recursive: true });
    Deno.writeTextFileSync(
      `${home}/.config/goose/config.yaml`,
      "x: " + "[".repeat(100_000) + "]".repeat(100_000) + "\n",
    );
    const outcomes = await sync(home, { agents: ["gemini", "codex", "goose", "cursor"] });
    assert.deepEqual(outcomes.map((o) => [o.agent, o.status, o.error?.code]), [
      ["gemini", "error", "SYNC_CONFIG_TOO_DEEP"],
      ["codex", "error", "SYNC_CONFIG_TOO_DEEP"],
      ["goose", "error", "SYNC_CONFIG_TOO_DEEP"],
      ["cursor", "written", undefined],
    ]);
    assert.deepEqual(outcomes[0]!.error?.location, {
      file: `${home}/.gemini/settings.json`,
      line: 1,
      column: 536,
    });
    assert.match(outcomes[0]!.detail, /invalid JSONC: nested deeper than 512 levels/);
    assert.equal(Deno.readTextFileSync(`${home}/.gemini/settings.json`), deep);
  });
});

Deno.test("syncAgents() refuses a config file over 64 MiB before reading it", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.cursor`);
    const file = Deno.openSync(`${home}/.cursor/mcp.json`, { write: true, create: true });
    file.truncateSync(64 * 1024 * 1024 + 1); // sparse: no real 64 MiB written
    file.close();
    const [cursor] = await sync(home, { agents: ["cursor"] });
    assert.equal(cursor!.status, "error");
    assert.equal(cursor!.error?.code, "SYNC_CONFIG_TOO_BIG");
    assert.match(cursor!.detail, /has 67108865 bytes, more than the 67108864 bytes sync reads/);
  });
});

Deno.test("syncAgents() refuses a read-only config unless forced, then keeps it read-only", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.cursor`);
    Deno.writeTextFileSync(`${home}/.cursor/mcp.json`, "{}\n");
    Deno.chmodSync(`${home}/.cursor/mcp.json`, 0o444);
    const [refused] = await sync(home, { agents: ["cursor"] });
    assert.deepEqual([refused!.status, refused!.error?.code], ["error", "SYNC_READ_ONLY"]);
    assert.equal(Deno.readTextFileSync(`${home}/.cursor/mcp.json`), "{}\n");
    const [forced] = await sync(home, { agents: ["cursor"], force: true });
    assert.equal(forced!.status, "written");
    assert.match(Deno.readTextFileSync(`${home}/.cursor/mcp.json`), /"symposium"/);
    assert.equal(Deno.statSync(`${home}/.cursor/mcp.json`).mode! & 0o777, 0o444);
  });
});

Deno.test("syncAgents() writes through a dangling dotfiles symlink, creating its target", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.config/zed`, { recursive: true });
    Deno.symlinkSync(`${home}/dotfiles/zed/settings.json`, `${home}/.config/zed/settings.json`);
    const [zed] = await sync(home, { agents: ["zed"] });
    assert.deepEqual([zed!.status, zed!.detail, zed!.file], [
      "written",
      "created the file",
      `${home}/dotfiles/zed/settings.json`,
    ]);
    assert.ok(Deno.lstatSync(`${home}/.config/zed/settings.json`).isSymlink);
    assert.match(Deno.readTextFileSync(`${home}/.config/zed/settings.json`), /"context_servers"/);
  });
});

Deno.test("syncAgents() with remove deletes Continue's file of ours when nothing else is left in it", async () => {
  await withHome(async (home) => {
    const file = `${home}/.continue/mcpServers/symposium.json`;
    await sync(home, { agents: ["continue"] });
    assert.deepEqual(Object.keys(JSON.parse(Deno.readTextFileSync(file)).mcpServers), ["symposium"]);
    const [removed] = await sync(home, { agents: ["continue"], remove: true });
    assert.deepEqual([removed!.status, removed!.detail], ["removed", "removed the file"]);
    assert.deepEqual([...Deno.readDirSync(`${home}/.continue/mcpServers`)].map((e) => e.name), [
      "symposium.json.bak",
    ]);
  });
});

Deno.test("syncAgents() redoes the edit on another program's version instead of losing it", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.cursor`);
    const path = `${home}/.cursor/mcp.json`;
    Deno.writeTextFileSync(path, '{ "theme": "old" }\n');
    let reads = 0;
    const fs = {
      ...denoWritableFileSystem,
      readTextFile: async (p: string) => {
        const text = await denoWritableFileSystem.readTextFile(p);
        // The agent rewrites its file right after sync's first read.
        if (p === path && reads++ === 0) Deno.writeTextFileSync(path, '{ "theme": "new" }\n');
        return text;
      },
    };
    const paths = linuxPaths(home, { PATH: "/nonexistent" });
    const [cursor] = await syncAgents({ ...REGISTER, agents: ["cursor"] }, {
      paths,
      server: FIXED_SERVER,
      fs,
    });
    assert.equal(cursor!.status, "written");
    const doc = JSON.parse(Deno.readTextFileSync(path));
    assert.equal(doc.theme, "new");
    assert.ok(doc.mcpServers.symposium);
  });
});

Deno.test("syncAgents() with project writes the program as a user types it, never this machine's paths", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/ws`);
    Deno.writeTextFileSync(`${home}/ws/Cargo.toml`, '[package]\nname = "app"\n');
    const ctx = fakeContext(home, { SYMPOSIUM_HOME: `${home}/custom` });
    ctx.cwd = `${home}/ws`;
    const code = await runSync(
      { agents: ["claude-code", "codex", "opencode"], project: true, dryRun: false, remove: false },
      ctx,
    );
    assert.equal(code, 0, ctx.err.join(""));
    assert.deepEqual(JSON.parse(Deno.readTextFileSync(`${home}/ws/.mcp.json`)).mcpServers.symposium, {
      type: "stdio",
      command: "cargo-agents",
      args: ["mcp-serve"],
      env: {},
    });
    const codex = Deno.readTextFileSync(`${home}/ws/.codex/config.toml`);
    assert.match(codex, /^command = "cargo-agents"\nargs = \["mcp-serve"\]$/m);
    const opencode = JSON.parse(Deno.readTextFileSync(`${home}/ws/opencode.json`));
    assert.deepEqual(opencode.mcp.symposium.command, ["cargo-agents", "mcp-serve"]);
    for (const f of [".mcp.json", ".codex/config.toml", "opencode.json"]) {
      assert.ok(!Deno.readTextFileSync(`${home}/ws/${f}`).includes(home), f);
    }
    const viaCargo = fakeContext(home);
    viaCargo.cwd = `${home}/ws`;
    assert.equal(
      await runSync(
        { agents: ["cursor"], project: true, dryRun: false, remove: false, viaCargo: true },
        viaCargo,
      ),
      0,
    );
    assert.deepEqual(JSON.parse(Deno.readTextFileSync(`${home}/ws/.cursor/mcp.json`)).mcpServers.symposium, {
      command: "cargo",
      args: ["agents", "mcp-serve"],
    });
  });
});

Deno.test("runSync() carries a non-default config dir as mcp-serve --config-dir, and none for the default", async () => {
  await withHome(async (home) => {
    const custom = fakeContext(home, { SYMPOSIUM_HOME: `${home}/work-symposium` });
    assert.equal(
      await runSync({ agents: ["codex"], project: false, dryRun: false, remove: false }, custom),
      0,
    );
    assert.match(
      Deno.readTextFileSync(`${home}/.codex/config.toml`),
      new RegExp(`^args = \\["mcp-serve", "--config-dir", "${home}/work-symposium"\\]$`, "m"),
    );
    const flag = { ...fakeContext(home), configDir: `${home}/flag-dir` };
    assert.equal(
      await runSync({ agents: ["cursor"], project: false, dryRun: false, remove: false }, flag),
      0,
    );
    assert.deepEqual(
      JSON.parse(Deno.readTextFileSync(`${home}/.cursor/mcp.json`)).mcpServers.symposium.args,
      [
        "mcp-serve",
        "--config-dir",
        `${home}/flag-dir`,
      ],
    );
    const plain = fakeContext(home);
    assert.equal(
      await runSync({ agents: ["windsurf"], project: false, dryRun: false, remove: false }, plain),
      0,
    );
    assert.deepEqual(
      JSON.parse(Deno.readTextFileSync(`${home}/.codeium/windsurf/mcp_config.json`)).mcpServers.symposium
        .args,
      ["mcp-serve"],
    );
  });
});

Deno.test("runSync() with list shows every agent id, whether it is detected and why, and its files", async () => {
  await withHome(async (home) => {
    Deno.mkdirSync(`${home}/.cursor`);
    Deno.mkdirSync(`${home}/bin`);
    Deno.writeTextFileSync(`${home}/bin/qwen`, "#!/bin/sh\n");
    Deno.chmodSync(`${home}/bin/qwen`, 0o755);
    const ctx = fakeContext(home, { PATH: `${home}/bin` });
    assert.equal(
      await runSync({ agents: [], project: false, dryRun: false, remove: false, list: true }, ctx),
      0,
    );
    const text = ctx.out.join("");
    assert.match(text, /^cursor +Cursor +detected +~\/\.cursor exists\n +file +~\/\.cursor\/mcp\.json$/m);
    assert.match(text, /^qwen-code +Qwen Code +detected +qwen on PATH\n +file +~\/\.qwen\/settings\.json$/m);
    assert.match(
      text,
      /^windsurf +Windsurf +not detected +no ~\/\.codeium\/windsurf, no windsurf on PATH$/m,
    );
    for (const agent of AGENTS) assert.match(text, new RegExp(`^${agent.id} `, "m"));
    assert.match(text, new RegExp(`\\n2 of ${AGENTS.length} agents detected;`));
    assert.deepEqual([...Deno.readDirSync(home)].map((e) => e.name).sort(), [".cursor", "bin"]);
    await assert.rejects(
      () => runSync({ agents: ["cursor"], project: false, dryRun: false, remove: false, list: true }, ctx),
      UsageError,
    );
  });
});
