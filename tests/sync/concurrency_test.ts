/**
 * `sync` against a busy `~/.claude.json` (5 MB, 20 000 projects), with real `main.ts sync`
 * processes: several at once, and with another program rewriting the file during the merge.
 * Nothing of the user's may be lost, the file is never absent, and the `.bak` is always there.
 */
import assert from "node:assert/strict";
import { REPO_ROOT } from "../_fakes_sync.ts";

const PROJECTS = 20_000;
/** Runs at once per round. */
const RUNS = 4;
const ROUNDS = 2;

/** A `~/.claude.json` as Claude Code writes it, about 5 MB: `PROJECTS` projects, no `symposium`. */
function bigClaudeJson(extra: Record<string, unknown> = {}): string {
  const projects: Record<string, unknown> = {};
  for (let i = 0; i < PROJECTS; i++) {
    projects[`/home/user/src/project-${i}`] = {
      allowedTools: [],
      history: [{ display: `fix the build of project ${i}`.padEnd(120, "."), pastedContents: {} }],
      mcpServers: {},
      hasTrustDialogAccepted: i % 2 === 0,
    };
  }
  return JSON.stringify({ numStartups: 42, ...extra, projects }, null, 2) + "\n";
}

async function denoDir(): Promise<string> {
  const fromEnv = Deno.env.get("DENO_DIR");
  if (fromEnv) return fromEnv;
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

/** `main.ts sync <args>` as a real process with `home` as HOME. */
function spawnSync(home: string, cacheDir: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "-P",
      "--v8-flags=--stack-size=1800",
      "--config",
      `${REPO_ROOT}/deno.json`,
      `${REPO_ROOT}/main.ts`,
      "sync",
      ...args,
    ],
    cwd: home,
    clearEnv: true,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: `${home}/.config`,
      PATH: "/nonexistent",
      DENO_DIR: cacheDir,
      NO_COLOR: "1",
    },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(240_000),
  }).spawn();
}

interface Finished {
  code: number;
  out: string;
}

async function finish(child: Deno.ChildProcess): Promise<Finished> {
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

/** `testdata/sync/other_writer.ts` on `path`, started (it said `ready`). */
async function startOther(path: string, newTextFile?: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "-P",
      "--config",
      `${REPO_ROOT}/deno.json`,
      `${REPO_ROOT}/testdata/sync/other_writer.ts`,
      path,
      ...(newTextFile === undefined ? [] : [newTextFile]),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  const readUntil = async (mark: string) => {
    while (!said.includes(mark)) {
      const { value, done } = await lines.read();
      if (done) break;
      said += value;
    }
  };
  await readUntil("ready\n");
  return {
    /** Stops it: how many times it found the file missing, whether it replaced it, and when. */
    async stop(): Promise<{ absent: number; replaced: boolean; duringMerge: boolean }> {
      await child.stdin.close();
      await readUntil("}");
      await child.status;
      return JSON.parse(said.slice(said.indexOf("{")));
    },
  };
}

/** The project count of a `~/.claude.json`, and whether it has our entry; `undefined` when unreadable. */
function inspect(
  path: string,
): { projects: number; entry: boolean; doc: Record<string, unknown> } | undefined {
  try {
    const doc = JSON.parse(Deno.readTextFileSync(path));
    return {
      projects: Object.keys(doc.projects ?? {}).length,
      entry: doc.mcpServers?.symposium !== undefined,
      doc,
    };
  } catch {
    return undefined;
  }
}

Deno.test("concurrent `sync --agent claude-code` runs keep every project of a 5 MB ~/.claude.json, every round", async () => {
  const home = await Deno.makeTempDir();
  try {
    const cacheDir = await denoDir();
    const path = `${home}/.claude.json`;
    const original = bigClaudeJson();
    const failures: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      Deno.writeTextFileSync(path, original);
      try {
        Deno.removeSync(`${path}.bak`);
      } catch {
        // The first round has none.
      }
      // A reader (an agent starting) must never find the file missing.
      const watcher = await startOther(path);
      // Half add the entry, half remove it: whatever the order, most runs really write.
      const runs = await Promise.all(
        Array.from(
          { length: RUNS },
          (_, i) =>
            finish(
              spawnSync(
                home,
                cacheDir,
                i % 2 === 0 ? ["--agent", "claude-code"] : ["--remove", "--agent", "claude-code"],
              ),
            ),
        ),
      );
      const { absent } = await watcher.stop();
      if (absent > 0) failures.push(`round ${round}: the file was missing ${absent} times`);
      const after = inspect(path);
      const backup = inspect(`${path}.bak`);
      const codes = runs.map((r) => r.code);
      if (after?.projects !== PROJECTS) {
        failures.push(`round ${round}: the file has ${after?.projects} projects`);
      }
      if (backup?.projects !== PROJECTS) {
        failures.push(`round ${round}: the .bak has ${backup?.projects} projects`);
      }
      if (codes.some((c) => c !== 0)) {
        failures.push(`round ${round}: exit codes ${codes}: ${runs.map((r) => r.out).join("\n")}`);
      }
      const leftovers = [...Deno.readDirSync(home)].map((e) => e.name).filter((n) =>
        n.startsWith(".claude.json.") && n !== ".claude.json.bak"
      );
      if (leftovers.length > 0) failures.push(`round ${round}: left behind ${leftovers}`);
    }
    assert.deepEqual(failures, []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("`sync` redoes its merge when another program rewrites ~/.claude.json meanwhile, and the file is never absent", async () => {
  const home = await Deno.makeTempDir();
  try {
    const cacheDir = await denoDir();
    const path = `${home}/.claude.json`;
    Deno.writeTextFileSync(path, bigClaudeJson());
    // The other program's version: one more key, as Claude Code adds when it starts.
    Deno.writeTextFileSync(`${home}/other.json`, bigClaudeJson({ lastOtherWrite: "kept" }));
    const other = await startOther(path, `${home}/other.json`);
    const run = await finish(spawnSync(home, cacheDir, ["--agent", "claude-code"]));
    const report = await other.stop();
    const after = inspect(path);
    assert.deepEqual(
      {
        code: run.code,
        absent: report.absent,
        replaced: report.replaced,
        duringMerge: report.duringMerge,
        projects: after?.projects,
        entry: after?.entry,
        theirs: after?.doc.lastOtherWrite,
        backup: inspect(`${path}.bak`)?.projects,
      },
      {
        code: 0,
        absent: 0,
        replaced: true,
        duringMerge: true,
        projects: PROJECTS,
        entry: true,
        theirs: "kept",
        backup: PROJECTS,
      },
      run.out,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
