/**
 * The system programs some tests drive (beyond Deno and the npm packages of deno.json), and the check those
 * tests make first: on a machine without one, the test fails at once with the program's name and the command
 * that installs it, instead of an obscure spawn error halfway through. `.ci/run` installs them;
 * `tests/prerequisites_test.ts` lists every missing one in a single failure.
 *
 * @module
 */

/** A program a test needs: where it is looked for, and how to install it (Debian/Ubuntu; `.ci/run` does). */
export interface Prerequisite {
  /** A name found on `PATH`, or an absolute path. */
  program: string;
  /** The command that installs it. */
  install: string;
  /** Which tests need it. */
  neededBy: string;
}

/** Every system program a test of the default `deno task test` run needs. */
export const PREREQUISITES = {
  chromium: {
    program: "/usr/bin/chromium",
    install: "apt-get install chromium",
    neededBy: "tests/auth/oauth_login_test.ts (the browser of the sign-in flow, driven headless)",
  },
  git: {
    program: "git",
    install: "apt-get install git",
    neededBy: "tests/plugin_sources/ and tests/e2e/plugin_sources_e2e_test.ts (git registries)",
  },
  cargo: {
    program: "cargo",
    install: "apt-get install cargo (or rustup: https://rustup.rs)",
    neededBy: "tests/plugin_sources/crate_plugins_test.ts (a real Cargo.lock and registry layout)",
  },
  ps: {
    program: "ps",
    install: "apt-get install procps",
    neededBy: "tests/backends/, tests/e2e/hard_stop_e2e_test.ts (which child processes are left)",
  },
  ip: {
    program: "ip",
    install: "apt-get install iproute2",
    neededBy: "tests/backends/http_netns_test.ts (network namespaces)",
  },
} as const satisfies Record<string, Prerequisite>;

/** Whether `program` (a name on `PATH`, or an absolute path) is an executable file here. */
export function isInstalled(program: string, path: string = Deno.env.get("PATH") ?? ""): boolean {
  const candidates = program.startsWith("/")
    ? [program]
    : path.split(":").filter((d) => d).map((d) => `${d}/${program}`);
  return candidates.some((file) => {
    try {
      const info = Deno.statSync(file);
      return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false; // Not there: try the next candidate.
    }
  });
}

/** The message a test fails with when `name` is missing: the program, who needs it, and the install command. */
export function missingMessage(name: keyof typeof PREREQUISITES): string {
  const p = PREREQUISITES[name];
  return `Cannot run this test: ${name} (${p.program}) is not installed; it is needed by ${p.neededBy}. ` +
    `Install it with \`${p.install}\` (.ci/run does), then run the tests again`;
}

/**
 * Fails the calling test at once when the system program `name` is missing.
 *
 * @throws {Error} {@link missingMessage} of `name`.
 */
export function requireProgram(name: keyof typeof PREREQUISITES): void {
  if (!isInstalled(PREREQUISITES[name].program)) throw new Error(missingMessage(name));
}
