import assert from "node:assert/strict";
import { UsageError } from "../../lib/diagnostics.ts";
import { AGENT_IDS, AGENTS, mergeEntry, openCodeShape } from "../../lib/sync/agents/mod.ts";
import { selectAgents } from "../../lib/sync/agent_selection.ts";
import { detectAgent, findExecutable } from "../../lib/sync/detect.ts";
import type { PathContext } from "../../lib/sync/platform_paths.ts";
import { displayPath } from "../../lib/sync/platform_paths.ts";
import { denoWritableFileSystem } from "../../lib/sync/writable_file_system.ts";
import { catchError, fakeFs, FIXED_SERVER, linuxPaths } from "../_fakes_sync.ts";

async function userPaths(p: PathContext, fs = fakeFs()): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const agent of AGENTS) out[agent.id] = (await agent.targets(p, fs, {})).map((t) => t.path);
  return out;
}

Deno.test("AgentDefinition.targets() gives the documented user files on Linux", async () => {
  assert.deepEqual(await userPaths(linuxPaths("/home/u")), {
    "claude-code": ["/home/u/.claude.json"],
    "claude-desktop": ["/home/u/.config/Claude/claude_desktop_config.json"],
    cursor: ["/home/u/.cursor/mcp.json"],
    vscode: ["/home/u/.config/Code/User/mcp.json"],
    windsurf: ["/home/u/.codeium/windsurf/mcp_config.json"],
    zed: ["/home/u/.config/zed/settings.json"],
    codex: ["/home/u/.codex/config.toml"],
    gemini: ["/home/u/.gemini/settings.json"],
    goose: ["/home/u/.config/goose/config.yaml"],
    kiro: ["/home/u/.kiro/settings/mcp.json"],
    opencode: ["/home/u/.config/opencode/opencode.json"],
    amp: ["/home/u/.config/amp/settings.json"],
    cline: ["/home/u/.cline/data/settings/cline_mcp_settings.json"],
    "qwen-code": ["/home/u/.qwen/settings.json"],
    "copilot-cli": ["/home/u/.copilot/mcp-config.json"],
    "roo-code": [
      "/home/u/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
    ],
    "kilo-code": ["/home/u/.config/kilo/kilo.jsonc"],
    continue: ["/home/u/.continue/mcpServers/symposium.json"],
    crush: ["/home/u/.config/crush/crush.json"],
    "factory-droid": ["/home/u/.factory/mcp.json"],
    augment: ["/home/u/.augment/settings.json"],
    trae: ["/home/u/.config/Trae/User/mcp.json"],
    kimi: ["/home/u/.kimi-code/mcp.json"],
    "lm-studio": ["/home/u/.lmstudio/mcp.json"],
    antigravity: ["/home/u/.gemini/antigravity/mcp_config.json"],
    junie: ["/home/u/.junie/mcp/mcp.json"],
    pi: ["/home/u/.pi/agent/mcp.json"],
  });
});

Deno.test("AgentDefinition.targets() honours COPILOT_HOME and KIMI_CODE_HOME, and writes the legacy Kimi CLI file where it is", async () => {
  const paths = await userPaths(
    linuxPaths("/home/u", { COPILOT_HOME: "/cfg/copilot", KIMI_CODE_HOME: "/cfg/kimi" }),
  );
  assert.deepEqual(paths["copilot-cli"], ["/cfg/copilot/mcp-config.json"]);
  assert.deepEqual(paths.kimi, ["/cfg/kimi/mcp.json"]);
  const kimi = AGENTS.find((a) => a.id === "kimi")!;
  const legacyOnly = await kimi.targets(linuxPaths("/home/u"), fakeFs(["/home/u/.kimi"]), {});
  assert.deepEqual(legacyOnly.map((t) => [t.label, t.path]), [["Kimi CLI", "/home/u/.kimi/mcp.json"]]);
  const both = await kimi.targets(linuxPaths("/home/u"), fakeFs(["/home/u/.kimi", "/home/u/.kimi-code"]), {});
  assert.deepEqual(both.map((t) => t.path), ["/home/u/.kimi-code/mcp.json", "/home/u/.kimi/mcp.json"]);
});

Deno.test("AGENTS has at least 25 agents, each with a unique id, a documentation source and detection hints", async () => {
  assert.ok(AGENTS.length >= 25, `${AGENTS.length} agents`);
  assert.equal(new Set(AGENTS.map((a) => a.id)).size, AGENTS.length);
  assert.deepEqual(AGENTS.map((a) => a.id), [...AGENT_IDS]);
  for (const agent of AGENTS) {
    assert.match(agent.docs, /^https:\/\//, agent.id);
    const hints = await agent.detection(linuxPaths("/home/u"), fakeFs());
    assert.ok(hints.paths.length + hints.binaries.length > 0, agent.id);
  }
});

Deno.test("AgentDefinition.targets() honours the agents' own environment overrides", async () => {
  const paths = await userPaths(linuxPaths("/home/u", {
    CLAUDE_CONFIG_DIR: "/cfg/claude",
    CODEX_HOME: "/cfg/codex",
    XDG_CONFIG_HOME: "/xdg",
    CLINE_DIR: "/cfg/cline",
    OPENCODE_CONFIG: "/cfg/oc.jsonc",
    VSCODE_APPDATA: "/vsdata",
  }));
  assert.deepEqual(paths["claude-code"], ["/cfg/claude/.claude.json"]);
  assert.deepEqual(paths.codex, ["/cfg/codex/config.toml"]);
  assert.deepEqual(paths.zed, ["/xdg/zed/settings.json"]);
  assert.deepEqual(paths.goose, ["/xdg/goose/config.yaml"]);
  assert.deepEqual(paths["claude-desktop"], ["/xdg/Claude/claude_desktop_config.json"]);
  assert.deepEqual(paths.vscode, ["/vsdata/Code/User/mcp.json"]);
  assert.deepEqual(paths.cline, ["/cfg/cline/data/settings/cline_mcp_settings.json"]);
  assert.deepEqual(paths.opencode, ["/cfg/oc.jsonc"]);
  // Gemini CLI has no override of its home folder.
  assert.deepEqual(paths.gemini, ["/home/u/.gemini/settings.json"]);
});

Deno.test("AgentDefinition.targets() ignores a relative XDG_CONFIG_HOME, as the XDG spec says", async () => {
  const paths = await userPaths(linuxPaths("/home/u", { XDG_CONFIG_HOME: "rel/cfg" }));
  assert.deepEqual(paths.zed, ["/home/u/.config/zed/settings.json"]);
});

Deno.test("AgentDefinition.targets() gives the macOS locations", async () => {
  const p: PathContext = {
    platform: "darwin",
    homeDir: "/Users/u",
    env: { XDG_CONFIG_HOME: "/xdg" },
    cwd: "/",
  };
  const paths = await userPaths(p);
  assert.deepEqual(paths["claude-desktop"], [
    "/Users/u/Library/Application Support/Claude/claude_desktop_config.json",
  ]);
  assert.deepEqual(paths.vscode, ["/Users/u/Library/Application Support/Code/User/mcp.json"]);
  assert.deepEqual(paths.zed, ["/Users/u/.config/zed/settings.json"]);
  assert.deepEqual(paths.goose, ["/xdg/goose/config.yaml"]);
});

Deno.test("AgentDefinition.targets() gives the Windows locations, preferring Claude Desktop's MSIX folder", async () => {
  const env = { APPDATA: "C:\\Users\\u\\AppData\\Roaming", LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" };
  const p: PathContext = { platform: "windows", homeDir: "C:\\Users\\u", env, cwd: "C:\\" };
  const plain = await userPaths(p);
  assert.deepEqual(plain["claude-desktop"], [
    "C:\\Users\\u\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
  ]);
  assert.deepEqual(plain.goose, ["C:\\Users\\u\\AppData\\Roaming\\Block\\goose\\config\\config.yaml"]);
  assert.deepEqual(plain.zed, ["C:\\Users\\u\\AppData\\Roaming\\Zed\\settings.json"]);
  assert.deepEqual(plain.codex, ["C:\\Users\\u\\.codex\\config.toml"]);
  const msixFs = {
    ...fakeFs(),
    readDir: (path: string) =>
      Promise.resolve(
        path === "C:\\Users\\u\\AppData\\Local\\Packages"
          ? [{ name: "Claude_pzs8sxrjxfjjc", isFile: false, isDirectory: true, isSymlink: false }]
          : [],
      ),
  };
  const [target] = await AGENTS.find((a) => a.id === "claude-desktop")!.targets(p, msixFs, {});
  assert.equal(
    target!.path,
    "C:\\Users\\u\\AppData\\Local\\Packages\\Claude_pzs8sxrjxfjjc\\LocalCache\\Roaming\\Claude\\claude_desktop_config.json",
  );
});

Deno.test("AgentDefinition.targets() honours PI_CODING_AGENT_DIR for Pi, and detects Pi by its folder or program", async () => {
  const paths = await userPaths(linuxPaths("/home/u", { PI_CODING_AGENT_DIR: "/cfg/pi" }));
  assert.deepEqual(paths.pi, ["/cfg/pi/mcp.json"]);
  const pi = AGENTS.find((a) => a.id === "pi")!;
  assert.deepEqual(await pi.detection(linuxPaths("/home/u"), fakeFs()), {
    paths: ["/home/u/.pi/agent"],
    binaries: ["pi"],
  });
});

Deno.test("AgentDefinition.targets() gives project files under the workspace root", async () => {
  const p = linuxPaths("/home/u");
  const out: Record<string, string[]> = {};
  for (const agent of AGENTS.filter((a) => a.hasProjectConfig)) {
    out[agent.id] = (await agent.targets(p, fakeFs(), { projectRoot: "/ws" })).map((t) => t.path);
  }
  assert.deepEqual(out, {
    "claude-code": ["/ws/.mcp.json"],
    cursor: ["/ws/.cursor/mcp.json"],
    vscode: ["/ws/.vscode/mcp.json"],
    zed: ["/ws/.zed/settings.json"],
    codex: ["/ws/.codex/config.toml"],
    gemini: ["/ws/.gemini/settings.json"],
    kiro: ["/ws/.kiro/settings/mcp.json"],
    opencode: ["/ws/opencode.json"],
    amp: ["/ws/.amp/settings.json"],
    "qwen-code": ["/ws/.qwen/settings.json"],
    "copilot-cli": ["/ws/.github/mcp.json"],
    "roo-code": ["/ws/.roo/mcp.json"],
    "kilo-code": ["/ws/.kilo/kilo.jsonc"],
    continue: ["/ws/.continue/mcpServers/symposium.json"],
    crush: ["/ws/.crush.json"],
    "factory-droid": ["/ws/.factory/mcp.json"],
    trae: ["/ws/.trae/mcp.json"],
    kimi: ["/ws/.kimi-code/mcp.json"],
    junie: ["/ws/.junie/mcp/mcp.json"],
    pi: ["/ws/.pi/mcp.json"],
  });
  const jsonc = await AGENTS.find((a) => a.id === "opencode")!.targets(
    p,
    fakeFs([], { "/ws/.opencode/opencode.jsonc": "{}" }),
    { projectRoot: "/ws" },
  );
  assert.deepEqual(jsonc.map((t) => t.path), ["/ws/.opencode/opencode.jsonc"]);
});

Deno.test("AgentDefinition.targets() writes Cline in every editor it is installed in", async () => {
  const p = linuxPaths("/home/u");
  const fs = fakeFs([
    "/home/u/.config/Code/User/globalStorage/saoudrizwan.claude-dev",
    "/home/u/.config/Cursor/User/globalStorage/saoudrizwan.claude-dev",
  ]);
  const targets = await AGENTS.find((a) => a.id === "cline")!.targets(p, fs, {});
  assert.deepEqual(targets.map((t) => [t.label, t.path]), [
    [
      "in Code",
      "/home/u/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    ],
    [
      "in Cursor",
      "/home/u/.config/Cursor/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    ],
  ]);
});

Deno.test("AgentDefinition.targets() uses VS Code Insiders when only it is installed", async () => {
  const fs = fakeFs(["/home/u/.config/Code - Insiders/User"]);
  const [target] = await AGENTS.find((a) => a.id === "vscode")!.targets(linuxPaths("/home/u"), fs, {});
  assert.equal(target!.path, "/home/u/.config/Code - Insiders/User/mcp.json");
});

Deno.test("openCodeShape() uses the V2 layout when the file already has mcp.servers", () => {
  const v2 = openCodeShape({ mcp: { servers: { a: { type: "local", command: ["a"] } } } }, FIXED_SERVER);
  assert.deepEqual(v2.address.containerPath, ["mcp", "servers"]);
  assert.deepEqual(v2.value, { type: "local", command: ["/opt/cargo-agents/bin/cargo-agents", "mcp-serve"] });
  const v1 = openCodeShape({ mcp: { a: { type: "local", command: ["a"] } } }, FIXED_SERVER);
  assert.deepEqual(v1.address.containerPath, ["mcp"]);
  assert.equal((v1.value as { enabled: boolean }).enabled, true);
  // A V1 server that happens to be named "servers" is not mistaken for the V2 layout.
  const named = openCodeShape({ mcp: { servers: { type: "local", command: ["x"] } } }, FIXED_SERVER);
  assert.deepEqual(named.address.containerPath, ["mcp"]);
  assert.deepEqual(openCodeShape({}, FIXED_SERVER, "v2").address.containerPath, ["mcp", "servers"]);
});

Deno.test("mergeEntry() overwrites owned keys, drops stale owned ones and keeps the user's others", () => {
  const owned = ["type", "command", "args", "url"];
  const ours = { type: "stdio", command: "/new", args: ["mcp-serve"], env: {} };
  assert.deepEqual(
    mergeEntry(
      { command: "/old", url: "http://x", env: { A: "1" }, disabled: true, autoApprove: ["t"] },
      ours,
      owned,
    ),
    {
      type: "stdio",
      command: "/new",
      args: ["mcp-serve"],
      env: { A: "1" },
      disabled: true,
      autoApprove: ["t"],
    },
  );
  assert.deepEqual(mergeEntry({ type: "stdio", command: "/old" }, { command: "/new" }, owned), {
    command: "/new",
    type: "stdio",
  });
  assert.deepEqual(mergeEntry({ type: "sse", command: "/old" }, { command: "/new" }, owned), {
    command: "/new",
  });
  assert.equal(mergeEntry("garbage", ours, owned), ours);
  assert.equal(mergeEntry(undefined, ours, owned), ours);
});

Deno.test("selectAgents() accepts ids and aliases in any case and drops repeats", () => {
  const picked = selectAgents(["Claude", "claude-code", "code", "opencode-v2", "codex-cli"]);
  assert.deepEqual(picked.map((s) => [s.agent.id, s.variant]), [
    ["claude-code", undefined],
    ["vscode", undefined],
    ["opencode", "v2"],
    ["codex", undefined],
  ]);
});

Deno.test("selectAgents() takes copilot for GitHub Copilot CLI and vscode-copilot for VS Code", () => {
  assert.deepEqual(selectAgents(["copilot", "vscode-copilot", "droid", "qwen"]).map((s) => s.agent.id), [
    "copilot-cli",
    "vscode",
    "factory-droid",
    "qwen-code",
  ]);
});

Deno.test("selectAgents() rejects an unknown name with a did-you-mean and the valid names", () => {
  const error = catchError(() => selectAgents(["curser"]));
  assert.ok(error instanceof UsageError);
  assert.equal(error.code, "USAGE");
  assert.equal(error.message, 'Cannot sync agent "curser": no such agent');
  assert.match(error.hint!, /^did you mean "cursor"\? Valid agents: claude-code, claude-desktop, cursor, /);
});

Deno.test("findExecutable() finds only executable files on PATH", async () => {
  const root = await Deno.makeTempDir();
  try {
    Deno.mkdirSync(`${root}/bin`);
    Deno.mkdirSync(`${root}/bin/zed`);
    Deno.writeTextFileSync(`${root}/bin/codex`, "#!/bin/sh\n");
    Deno.chmodSync(`${root}/bin/codex`, 0o755);
    Deno.writeTextFileSync(`${root}/bin/amp`, "not executable");
    Deno.chmodSync(`${root}/bin/amp`, 0o644);
    const p = linuxPaths(root, { PATH: `/nonexistent:${root}/bin` });
    assert.equal(
      await findExecutable("codex", { paths: p, fs: denoWritableFileSystem }),
      `${root}/bin/codex`,
    );
    assert.equal(await findExecutable("amp", { paths: p, fs: denoWritableFileSystem }), undefined);
    assert.equal(await findExecutable("zed", { paths: p, fs: denoWritableFileSystem }), undefined);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("findExecutable() tries the PATHEXT extensions on Windows", async () => {
  const p: PathContext = {
    platform: "windows",
    homeDir: "C:\\Users\\u",
    env: { Path: "C:\\tools;C:\\bin", PATHEXT: ".EXE;.CMD" },
    cwd: "C:\\",
  };
  const fs = fakeFs([], { "C:\\bin\\gemini.cmd": "" });
  assert.equal(await findExecutable("gemini", { paths: p, fs: fs }), "C:\\bin\\gemini.cmd");
});

Deno.test("detectAgent() looks for the config folder, then the program on PATH", async () => {
  const cursor = AGENTS.find((a) => a.id === "cursor")!;
  const found = await detectAgent(cursor, { paths: linuxPaths("/home/u"), fs: fakeFs(["/home/u/.cursor"]) });
  assert.deepEqual([found.isInstalled, found.evidence], [true, "/home/u/.cursor"]);
  const missing = await detectAgent(cursor, { paths: linuxPaths("/home/u"), fs: fakeFs() });
  assert.equal(missing.isInstalled, false);
  assert.deepEqual(missing.lookedFor, { paths: ["/home/u/.cursor"], binaries: ["cursor", "cursor-agent"] });
});

Deno.test("detectAgent() does not take ~/.gemini alone for Gemini CLI (Antigravity uses it too)", async () => {
  const gemini = AGENTS.find((a) => a.id === "gemini")!;
  const result = await detectAgent(gemini, { paths: linuxPaths("/home/u"), fs: fakeFs(["/home/u/.gemini"]) });
  assert.equal(result.isInstalled, false);
});

Deno.test("displayPath() abbreviates the home directory, and only at a path boundary", () => {
  assert.equal(displayPath("/home/u/.codex/config.toml", "/home/u"), "~/.codex/config.toml");
  assert.equal(displayPath("/home/user2/x", "/home/u"), "/home/user2/x");
  assert.equal(displayPath("/etc/x", ""), "/etc/x");
});
