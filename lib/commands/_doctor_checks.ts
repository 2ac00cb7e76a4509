/**
 * The offline checks of `doctor` (private to `lib/commands/`): what `status` already knows (config,
 * workspace, plugins and their trust, git registries, refusals, sign-in states, private folders)
 * turned into check lines, and whether each agent's MCP config still holds the entry `sync` writes
 * (a dry run of `sync`: nothing is written).
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import type { LoadedResolution } from "../catalog/resolve.ts";
import type { StatusProblem, StatusReport } from "./_status_types.ts";
import { trustCommand } from "../plugin_sources/mod.ts";
import {
  type PathContext,
  PORTABLE_CARGO_SERVER,
  PORTABLE_SERVER,
  type ServerCommand,
  syncAgents,
  toPlatform,
} from "../sync/mod.ts";
import { userServerCommand } from "./sync.ts";

/** `ok` (a check mark), `warn` `!` (worth knowing; does not fail the run), `fail` (a cross; exit code 1). */
export type DoctorState = "ok" | "warn" | "fail";

/** One line of `doctor`, and one entry of `doctor --json`'s `checks`. */
export interface DoctorCheck {
  /**
   * What is checked: `program`, `config`, `workspace`, `problem`, `plugin`, `registry`, `agent`,
   * `server`, `sign-in`, `tool-cache`, `sandbox`, `session` (the session could not open) or `log`.
   */
  area: string;
  /** Which one: an agent id, a server, plugin or registry name, a file; `""` when the area is one thing. */
  subject: string;
  state: DoctorState;
  /** What was found, in one line (no secret: names and states only). */
  message: string;
  /** What to do about it (an exact command when there is one); absent when nothing is to be done. */
  fix?: string | undefined;
  /** The error code, when the check found one (e.g. `SERVER_UNTRUSTED`, `START_FAILED`). */
  code?: string | undefined;
  /** Servers and the sandbox: how long the check took, in ms. */
  elapsedMs?: number | undefined;
  /** Servers that answered `tools/list`: how many tools they list. */
  toolCount?: number | undefined;
  /**
   * Servers that answered: the protocol era they speak, `legacy` (`initialize` first) or `modern`
   * (MCP 2026-07-28), when the tool cache records it.
   */
  era?: "legacy" | "modern" | undefined;
}

/** `cargo agents` as every fix spells the program. */
const PROGRAM = "cargo agents";

/** The config, workspace and problem lines `status` knows, in that order. */
export function configChecks(report: StatusReport): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  const configError = report.configError;
  checks.push(
    configError ? fromProblem("config", report.configFile, configError) : {
      area: "config",
      subject: report.configFile,
      state: "ok",
      message: report.configFilePresent ? "loads" : "absent: every setting has its default",
    },
  );
  const ws = report.workspace;
  checks.push(
    ws.root === null
      ? {
        area: "workspace",
        subject: "",
        state: "warn",
        message: "no Cargo workspace around this folder: only servers that apply everywhere are in scope",
        fix: "run it inside the Rust workspace the agent works in",
      }
      : {
        area: "workspace",
        subject: ws.root,
        state: "ok",
        message: `${ws.manifests.length} manifest(s), ${ws.dependencyCount} direct dependencies${
          ws.lockfile ? ", Cargo.lock" : ""
        }`,
      },
  );
  for (const problem of report.problems) {
    if (problem.code === "SERVER_UNTRUSTED") continue; // its plugin's trust line says it with the command
    if (configError && problem.code === configError.code && problem.message === configError.message) continue;
    const check = fromProblem("problem", problem.location?.file ?? "", problem);
    // A folder others can read is a warning (`status` exits 0 for it too).
    if (problem.code === "PRIVATE_DIR_LOOSE") check.state = "warn";
    checks.push(check);
  }
  return checks;
}

function fromProblem(area: string, subject: string, problem: StatusProblem): DoctorCheck {
  const at = problem.location
    ? ` (${problem.location.file}:${problem.location.line}:${problem.location.column})`
    : "";
  return {
    area,
    subject,
    state: "fail",
    message: `${problem.message}${at}`,
    fix: problem.hint,
    code: problem.code,
  };
}

/** One line per plugin that needs trust and lacks it, with the command that trusts it after review. */
export function trustChecks(loaded: LoadedResolution): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  for (const plugin of loaded.plugins) {
    if (plugin.trust === undefined) continue;
    const source = plugin.source ?? "workspace";
    if (plugin.trust === "trusted") {
      checks.push({
        area: "plugin",
        subject: plugin.name,
        state: "ok",
        message: `${source} manifest trusted`,
      });
      continue;
    }
    const servers = plugin.manifest.mcpServers.map((s) => s.name);
    checks.push({
      area: "plugin",
      subject: plugin.name,
      state: "fail",
      code: "SERVER_UNTRUSTED",
      message: `${source} manifest ${plugin.file} is ${
        plugin.trust === "changed" ? "changed since it was trusted" : "not trusted"
      }: its server(s) ${servers.join(", ") || "(none)"} do not start`,
      fix: `run \`${
        (plugin.trustFiles ?? [plugin.file]).map(trustCommand).join(" && ")
      }\` (it shows what each server runs and asks before it trusts)`,
    });
  }
  return checks;
}

/** Git registries: fetched, when, and the last fetch's failure. */
export function registryChecks(report: StatusReport): DoctorCheck[] {
  return report.sources.filter((src) => src.kind === "git").map((src): DoctorCheck => {
    const when = src.fetchedAtMs === undefined ? undefined : new Date(src.fetchedAtMs).toISOString();
    if (src.fetchError !== undefined || when === undefined) {
      return {
        area: "registry",
        subject: src.name,
        state: "warn",
        message: src.fetchError !== undefined
          ? `last fetch failed${when ? ` (using the copy fetched ${when})` : ""}: ${src.fetchError}`
          : "not fetched yet: its plugins are not loaded",
        fix: `run \`${PROGRAM} plugin sync ${src.name}\``,
      };
    }
    return {
      area: "registry",
      subject: src.name,
      state: "ok",
      message: `fetched ${when}, ${src.plugins} plugin(s)`,
    };
  });
}

/** Remote servers in scope: the stored sign-in's state (read from the credentials folder, never sent). */
export function signInChecks(report: StatusReport): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  for (const server of report.servers) {
    if (server.state !== "applies" || server.auth === undefined) continue;
    const expiry = server.authExpiresAt === undefined
      ? ""
      : ` (token expiry ${new Date(server.authExpiresAt).toISOString()})`;
    const login = `run \`${PROGRAM} mcp login ${server.name}\``;
    const check: DoctorCheck = { area: "sign-in", subject: server.name, state: "ok", message: "" };
    switch (server.auth) {
      case "signed-in":
        check.message = `signed in${expiry}`;
        break;
      case "expired-refreshable":
        check.message = `expired${expiry}; renewed with the stored refresh token on next use`;
        break;
      case "header-auth":
        check.message = "the manifest sets an Authorization header (no sign-in)";
        break;
      case "expired":
        Object.assign(check, { state: "fail", message: `expired${expiry}`, fix: login });
        break;
      default:
        Object.assign(
          check,
          server.authStored
            ? { state: "fail", message: "stored sign-in unusable", fix: server.authHint ?? login }
            : { state: "warn", message: "none stored", fix: `if the server asks for one: ${login}` },
        );
    }
    checks.push(check);
  }
  return checks;
}

function pathsOf(ctx: CommandContext): PathContext {
  return { platform: toPlatform(Deno.build.os), homeDir: ctx.homeDir, env: ctx.env, cwd: ctx.cwd };
}

/**
 * One line per agent `sync` detects (config folder or program on `PATH`): whether its user-level
 * config file still holds the `symposium` entry this program's `sync` would write, found by a
 * `sync --dry-run` (reads each file under `sync`'s budgets, writes nothing).
 */
export async function agentChecks(ctx: CommandContext): Promise<DoctorCheck[]> {
  if (ctx.homeDir === "") {
    return [{
      area: "agent",
      subject: "",
      state: "fail",
      code: "SYNC_NO_HOME",
      message: "the home directory is unknown, so no agent config can be found",
      fix: "set HOME (USERPROFILE on Windows)",
    }];
  }
  const paths: PathContext = {
    platform: toPlatform(Deno.build.os),
    homeDir: ctx.homeDir,
    env: ctx.env,
    cwd: ctx.cwd,
  };
  const outcomes = await syncAgents({ agents: [], project: false, dryRun: true, remove: false }, {
    paths,
    server: userServerCommand(ctx),
    signal: ctx.signal,
  });
  const checks = outcomes.filter((o) => o.status !== "skipped").map((o): DoctorCheck => {
    const where = o.file ?? "";
    const sync = `run \`${PROGRAM} sync --agent ${o.agent}\``;
    if (o.status === "unchanged") {
      return { area: "agent", subject: o.agent, state: "ok", message: `${o.agentName}: synced (${where})` };
    }
    if (o.status === "error") {
      return {
        area: "agent",
        subject: o.agent,
        state: "fail",
        code: o.error?.code,
        message: `${o.agentName}: ${o.detail}`,
        fix: o.error?.hint ?? `fix the file, then ${sync}`,
      };
    }
    const what = o.detail === "replaced a stale entry" ? "its entry points elsewhere" : "no symposium entry";
    return {
      area: "agent",
      subject: o.agent,
      state: "fail",
      message: `${o.agentName}: not synced, ${what} (${where})`,
      fix: sync,
    };
  });
  if (checks.length === 0) {
    checks.push({
      area: "agent",
      subject: "",
      state: "warn",
      message: "no agent detected (no agent config folder, no agent program on PATH)",
      fix: `name yours: \`${PROGRAM} sync --agent NAME\` (\`${PROGRAM} sync --list\` shows them all)`,
    });
  }
  return checks;
}

/**
 * The tool cache as it was before the live checks (`list_tools` answers from a fresh listing without
 * starting the server; the live checks then refresh it): how many servers in scope had one.
 */
export function toolCacheCheck(report: StatusReport): DoctorCheck[] {
  const applying = report.servers.filter((s) => s.state === "applies");
  if (applying.length === 0) return [];
  const fresh = applying.filter((s) => s.toolCache?.state === "fresh").length;
  const stale = applying.filter((s) => s.toolCache?.state === "stale").length;
  return [{
    area: "tool-cache",
    subject: "",
    state: "ok",
    message: `${fresh} of ${applying.length} server(s) had a fresh listing${
      stale > 0 ? `, ${stale} a stale one` : ""
    }; the servers that answer below are cached anew`,
  }];
}

/**
 * The project-level files (`sync --project`) of the detected agents that hold a `symposium` entry:
 * A check mark when it is what `sync --project` (or `--via-cargo`) writes, a cross when it starts something else.
 * A project without such files, or outside a Cargo workspace, gives no line: they are optional.
 */
export async function projectAgentChecks(ctx: CommandContext): Promise<DoctorCheck[]> {
  if (ctx.homeDir === "") return [];
  const dryRun = async (projectServer: ServerCommand) => {
    try {
      return await syncAgents({ agents: [], project: true, dryRun: true, remove: false }, {
        paths: pathsOf(ctx),
        server: projectServer,
        projectServer,
        signal: ctx.signal,
      });
    } catch {
      return []; // Not in a Cargo workspace (SYNC_NO_WORKSPACE): no project-level files to check.
    }
  };
  const [plain, viaCargo] = await Promise.all([dryRun(PORTABLE_SERVER), dryRun(PORTABLE_CARGO_SERVER)]);
  const checks: DoctorCheck[] = [];
  for (const o of plain) {
    const cargo = viaCargo.find((v) => v.agent === o.agent && v.file === o.file);
    const synced = o.status === "unchanged" || cargo?.status === "unchanged";
    if (synced) {
      checks.push({
        area: "agent",
        subject: o.agent,
        state: "ok",
        message: `${o.agentName}: project file synced (${o.file})`,
      });
    } else if (o.status === "written" && o.detail === "replaced a stale entry") {
      checks.push({
        area: "agent",
        subject: o.agent,
        state: "fail",
        message: `${o.agentName}: the project file's symposium entry starts something else (${o.file})`,
        fix:
          `run \`${PROGRAM} sync --project --agent ${o.agent}\` (add --via-cargo to start \`cargo agents mcp-serve\`)`,
      });
    }
  }
  return checks;
}
