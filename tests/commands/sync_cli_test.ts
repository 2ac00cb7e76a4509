/**
 * Runs `main.ts sync` as a real process against a fake home populated from the golden fixtures,
 * as a user would: dry run, register, register again, remove.
 */
import assert from "node:assert/strict";
import { type AgentId, AGENTS } from "../../lib/sync/agents/mod.ts";
import { editConfigText } from "../../lib/sync/sync_agents.ts";
import { denoWritableFileSystem } from "../../lib/sync/writable_file_system.ts";
import { linuxPaths, readCaseFile, REPO_ROOT } from "../_fakes_sync.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";
import { parse as parseToml } from "smol-toml";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

/** Where each agent's user file lives under the fake home on Linux (reference/agents.md). */
const USER_FILES: Record<AgentId, string> = {
  "claude-code": ".claude.json",
  "claude-desktop": ".config/Claude/claude_desktop_config.json",
  cursor: ".cursor/mcp.json",
  vscode: ".config/Code/User/mcp.json",
  windsurf: ".codeium/windsurf/mcp_config.json",
  zed: ".config/zed/settings.json",
  codex: ".codex/config.toml",
  gemini: ".gemini/settings.json",
  goose: ".config/goose/config.yaml",
  kiro: ".kiro/settings/mcp.json",
  opencode: ".config/opencode/opencode.json",
  amp: ".config/amp/settings.json",
  cline: ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
  "qwen-code": ".qwen/settings.json",
  "copilot-cli": ".copilot/mcp-config.json",
  "roo-code": ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
  "kilo-code": ".config/kilo/kilo.jsonc",
  continue: ".continue/mcpServers/symposium.json",
  crush: ".config/crush/crush.json",
  "factory-droid": ".factory/mcp.json",
  augment: ".augment/settings.json",
  trae: ".config/Trae/User/mcp.json",
  kimi: ".kimi-code/mcp.json",
  "lm-studio": ".lmstudio/mcp.json",
  antigravity: ".gemini/antigravity/mcp_config.json",
  junie: ".junie/mcp/mcp.json",
  pi: ".pi/agent/mcp.json",
};

const AGENT_COUNT = AGENTS.length;

/**
 * The entry must start this program the way the test runs it: deno + args, from source, and carry
 * the config dir, which is not the default here (`XDG_CONFIG_HOME` is set).
 */
function self(home: string) {
  return {
    command: Deno.execPath(),
    args: [...sourceRunArgs(REPO_ROOT), "mcp-serve", "--config-dir", `${home}/.config/symposium`],
  };
}

async function denoDir(): Promise<string> {
  const fromEnv = Deno.env.get("DENO_DIR");
  if (fromEnv) return fromEnv;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function runCli(
  home: string,
  cacheDir: string,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-P", "--config", `${REPO_ROOT}/deno.json`, `${REPO_ROOT}/main.ts`, "sync", ...args],
    cwd: home,
    clearEnv: true,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: `${home}/.config`,
      PATH: `${home}/bin`,
      DENO_DIR: cacheDir,
      NO_COLOR: "1",
      ...extraEnv,
    },
    stdout: "piped",
    stderr: "piped",
    // A FIFO that sync opened would block it forever: end the run instead of the test suite.
    signal: AbortSignal.timeout(120_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function tableRows(stdout: string): string[] {
  return stdout.split("\n").filter((l) =>
    AGENTS.some((a) => l.startsWith(a.name + " ") || l.startsWith(a.name + "  "))
  );
}

Deno.test("main.ts sync registers, re-registers, dry-runs and removes across every agent in a fake home", async () => {
  const home = await Deno.makeTempDir();
  try {
    const cacheDir = await denoDir();
    Deno.mkdirSync(`${home}/bin`);
    const before: Record<string, string> = {};
    for (const agent of AGENTS) {
      const path = `${home}/${USER_FILES[agent.id]}`;
      Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
      before[agent.id] = readCaseFile(agent.id, "before");
      Deno.writeTextFileSync(path, before[agent.id]!);
    }
    const unchangedFiles = () =>
      AGENTS.every((a) => Deno.readTextFileSync(`${home}/${USER_FILES[a.id]}`) === before[a.id]);

    const dry = await runCli(home, cacheDir, ["--dry-run"]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(
      tableRows(dry.stdout).filter((l) => / would write +~\//.test(l)).length,
      AGENT_COUNT,
      dry.stdout,
    );
    assert.equal(dry.stdout.match(/^\+\+\+ /gm)?.length, AGENT_COUNT);
    assert.ok(unchangedFiles(), "a dry run wrote a file");

    const first = await runCli(home, cacheDir, []);
    assert.equal(first.code, 0, first.stderr);
    const rows = tableRows(first.stdout);
    assert.equal(rows.length, AGENT_COUNT, first.stdout);
    for (const agent of AGENTS) {
      const path = `${home}/${USER_FILES[agent.id]}`;
      assert.ok(
        rows.some((r) =>
          r.startsWith(agent.name) && r.includes(` written  ~/${USER_FILES[agent.id]} (added the entry)`)
        ),
        agent.id,
      );
      const [target] = await agent.targets(
        linuxPaths(home, { XDG_CONFIG_HOME: `${home}/.config` }),
        denoWritableFileSystem,
        {},
      );
      assert.equal(target!.path, path);
      const expected =
        editConfigText(target!, before[agent.id]!, { server: self(home), remove: false }).after;
      assert.equal(Deno.readTextFileSync(path), expected, agent.id);
      assert.equal(Deno.readTextFileSync(`${path}.bak`), before[agent.id], `${agent.id} backup`);
    }
    assert.match(first.stdout, new RegExp(`\\n${AGENT_COUNT} written\\n$`));

    const second = await runCli(home, cacheDir, []);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(
      tableRows(second.stdout).filter((l) => / unchanged +~\/.*\(already registered\)$/.test(l)).length,
      AGENT_COUNT,
    );

    const removed = await runCli(home, cacheDir, ["--remove"]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, new RegExp(`\\n${AGENT_COUNT} removed\\n$`));
    assert.ok(unchangedFiles(), "remove did not restore every file byte for byte");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("main.ts sync exits 1, names file:line:col and leaves a malformed file untouched", async () => {
  const home = await Deno.makeTempDir();
  try {
    const cacheDir = await denoDir();
    Deno.mkdirSync(`${home}/.config/zed`, { recursive: true });
    const broken = readCaseFile("zed", "malformed");
    Deno.writeTextFileSync(`${home}/.config/zed/settings.json`, broken);
    const run = await runCli(home, cacheDir, ["--agent", "zed", "--agent", "cursor"]);
    assert.equal(run.code, 1);
    assert.match(
      run.stdout,
      /Zed +error +~\/\.config\/zed\/settings\.json:4:3 \(invalid JSONC: expected a comma\)/,
    );
    assert.match(run.stdout, /Cursor +written +~\/\.cursor\/mcp\.json \(created the file\)/);
    assert.ok(
      run.stderr.includes(`error[SYNC_CONFIG_SYNTAX]: Cannot read "${home}/.config/zed/settings.json"`),
    );
    assert.ok(run.stderr.includes(`  --> ${home}/.config/zed/settings.json:4:3\n`));
    assert.equal(Deno.readTextFileSync(`${home}/.config/zed/settings.json`), broken);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("main.ts sync refuses a FIFO and a 100,000-deep file by name, writes the other agents, exits 1", async () => {
  const home = await Deno.makeTempDir();
  try {
    const cacheDir = await denoDir();
    Deno.mkdirSync(`${home}/bin`);
    Deno.mkdirSync(`${home}/.cursor`);
    const mk = await new Deno.Command("mkfifo", { args: [`${home}/.cursor/mcp.json`] }).output();
    assert.equal(mk.code, 0);
    Deno.mkdirSync(`${home}/.gemini`);
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    Deno.writeTextFileSync(`${home}/.gemini/settings.json`, `{"x": ${deep}}`);
    const started = performance.now();
    const run = await runCli(home, cacheDir, ["--agent", "cursor", "--agent", "gemini", "--agent", "kiro"]);
    assert.ok(performance.now() - started < 60_000, "sync hung on the FIFO");
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stdout,
      /Cursor +error +~\/\.cursor\/mcp\.json \(it is a FIFO \(named pipe\), not a regular file\)/,
    );
    assert.match(
      run.stdout,
      /Gemini CLI +error +~\/\.gemini\/settings\.json:1:518 \(invalid JSONC: nested deeper than 512 levels\)/,
    );
    assert.match(run.stdout, /Kiro +written +~\/\.kiro\/settings\/mcp\.json \(created the file\)/);
    assert.ok(
      run.stderr.includes(`error[SYNC_NOT_A_FILE]: Cannot read "${home}/.cursor/mcp.json"`),
      run.stderr,
    );
    assert.ok(run.stderr.includes("error[SYNC_CONFIG_TOO_DEEP]"), run.stderr);
    assert.ok(!run.stderr.includes("RangeError"), run.stderr);
    assert.ok(Deno.lstatSync(`${home}/.cursor/mcp.json`).isFifo);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("the Codex entry sync writes finds a non-default config dir without SYMPOSIUM_HOME, and starts quietly", async () => {
  const home = await Deno.makeTempDir();
  try {
    const cacheDir = await denoDir();
    Deno.mkdirSync(`${home}/bin`);
    const configDir = `${home}/work/symposium`;
    Deno.mkdirSync(`${configDir}/plugins/only-here`, { recursive: true });
    Deno.writeTextFileSync(
      `${configDir}/plugins/only-here/SYMPOSIUM.toml`,
      'name = "only-here"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "onlyhere"\ncommand = "true"\n',
    );
    Deno.mkdirSync(`${home}/ws`);
    Deno.writeTextFileSync(`${home}/ws/Cargo.toml`, '[package]\nname = "ws"\nversion = "0.1.0"\n');
    const run = await runCli(home, cacheDir, ["--agent", "codex"], { SYMPOSIUM_HOME: configDir });
    assert.equal(run.code, 0, run.stderr);
    const codex = parseToml(Deno.readTextFileSync(`${home}/.codex/config.toml`)) as {
      mcp_servers: { symposium: { command: string; args: string[]; startup_timeout_sec: number } };
    };
    const entry = codex.mcp_servers.symposium;
    assert.deepEqual(entry.args.slice(-3), ["mcp-serve", "--config-dir", configDir]);
    assert.equal(entry.startup_timeout_sec, 30);
    // Start it as Codex does: only a short list of variables, no SYMPOSIUM_HOME or XDG_CONFIG_HOME.
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { HOME: home, PATH: Deno.env.get("PATH") ?? "", DENO_DIR: cacheDir },
      cwd: `${home}/ws`,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Uint8Array) => void (stderr += new TextDecoder().decode(chunk)));
    const client = new Client({ name: "codex-like", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const execute = tools.find((t) => t.name === "execute");
      assert.match(execute?.description ?? "", /Servers in scope: onlyhere\./);
    } finally {
      await client.close();
    }
    assert.ok(!/Warning|Download /.test(stderr), `deno wrote to stderr at start:\n${stderr}`);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/** Every file and folder under `dir` (links not followed), with each file's content. */
function snapshot(dir: string, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    const key = prefix + entry.name;
    if (entry.isSymlink) out[key] = `-> ${Deno.readLinkSync(path)}`;
    else if (entry.isDirectory) Object.assign(out, { [key + "/"]: "" }, snapshot(path, key + "/"));
    else out[key] = Deno.readTextFileSync(path);
  }
  return out;
}

Deno.test("main.ts sync --project refuses a repository's symlinks that lead out of it, and writes nothing there", async () => {
  const root = await Deno.makeTempDir();
  try {
    const cacheDir = await denoDir();
    const home = `${root}/home`;
    const repo = `${home}/src/cloned`;
    // The user's own files, outside the repository.
    Deno.mkdirSync(`${home}/.config/autostart`, { recursive: true });
    Deno.mkdirSync(`${home}/.cargo`);
    Deno.mkdirSync(`${home}/bin`);
    Deno.mkdirSync(`${home}/elsewhere`);
    Deno.writeTextFileSync(`${home}/.claude.json`, '{"projects": {"/home/me/a": {}}}\n');
    Deno.writeTextFileSync(`${home}/.config/autostart/planted.json`, "{}\n");
    Deno.writeTextFileSync(`${home}/.cargo/config.toml`, '[build]\ntarget-dir = "/tmp/t"\n');
    const outside = snapshot(home);
    // The repository, as cloned: every link is committed.
    Deno.mkdirSync(`${repo}/.cursor`, { recursive: true });
    Deno.mkdirSync(`${repo}/.codex`);
    Deno.mkdirSync(`${repo}/config`);
    Deno.writeTextFileSync(`${repo}/Cargo.toml`, "[workspace]\nmembers = []\n");
    Deno.symlinkSync("../../.claude.json", `${repo}/.mcp.json`);
    Deno.symlinkSync(`${home}/.config/autostart/planted.json`, `${repo}/.cursor/mcp.json`);
    Deno.symlinkSync("../../../.cargo/config.toml", `${repo}/.codex/config.toml`);
    Deno.symlinkSync(`${home}/elsewhere`, `${repo}/.vscode`); // a folder
    Deno.symlinkSync(`${home}/not-yet/kiro`, `${repo}/.kiro`); // a folder that sync would create
    // A link that stays inside the repository is fine.
    Deno.mkdirSync(`${repo}/.zed`);
    Deno.symlinkSync("../config/zed.json", `${repo}/.zed/settings.json`);
    const agents = ["claude-code", "cursor", "codex", "vscode", "kiro", "zed"];
    const run = await runCli(repo, cacheDir, ["--project", ...agents.flatMap((a) => ["--agent", a])], {
      HOME: home,
      XDG_CONFIG_HOME: `${home}/.config`,
    });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    for (
      const [file, link] of [
        [".mcp.json", ".mcp.json"],
        [".cursor/mcp.json", ".cursor/mcp.json"],
        [
          ".codex/config.toml",
          ".codex/config.toml",
        ],
        [".vscode/mcp.json", ".vscode"],
        [".kiro/settings/mcp.json", ".kiro"],
      ]
    ) {
      assert.ok(
        run.stderr.includes(`Cannot write "${repo}/${file}": `) &&
          run.stderr.includes(`"${link}" is a symbolic link that leads outside the project "${repo}"`),
        `${file}: ${run.stderr}`,
      );
      assert.ok(run.stderr.includes(`rm ${link}`), run.stderr);
    }
    assert.deepEqual(snapshot(home), { ...outside, ...withRepo(snapshot(repo), "src/cloned/") });
    assert.match(Deno.readTextFileSync(`${repo}/config/zed.json`), /"symposium"/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

function withRepo(files: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = { "src/": "", [prefix]: "" };
  for (const [k, v] of Object.entries(files)) out[prefix + k] = v;
  return out;
}
