import assert from "node:assert/strict";
import { childEnvironment, envNamesByOrigin, isBaseEnvName } from "../../lib/backends/child_env.ts";

const PARENT = {
  PATH: "/usr/bin",
  HOME: "/home/me",
  LANG: "en_US.UTF-8",
  LC_CTYPE: "C",
  HTTPS_PROXY: "http://proxy:3128",
  npm_config_cache: "/home/me/.npm",
  GITHUB_TOKEN: "ghp_unrelated",
  AWS_SECRET_ACCESS_KEY: "aws",
};

Deno.test("childEnvironment() passes the base variables and the manifest env, nothing else", () => {
  const { env, origins } = childEnvironment(PARENT, { manifestEnv: { LOG: "debug" }, os: "linux" });
  assert.deepEqual(env, {
    PATH: "/usr/bin",
    HOME: "/home/me",
    LANG: "en_US.UTF-8",
    LC_CTYPE: "C",
    HTTPS_PROXY: "http://proxy:3128",
    npm_config_cache: "/home/me/.npm",
    LOG: "debug",
  });
  assert.equal(origins.LOG, "manifest");
  assert.equal(origins.PATH, "base");
});

Deno.test("childEnvironment() copies env-passthrough names that are set and reports the missing ones", () => {
  const child = childEnvironment(PARENT, { passthrough: ["GITHUB_TOKEN", "NOT_SET"], os: "linux" });
  assert.equal(child.env.GITHUB_TOKEN, "ghp_unrelated");
  assert.equal(child.origins.GITHUB_TOKEN, "passthrough");
  assert.equal(child.env.AWS_SECRET_ACCESS_KEY, undefined);
  assert.deepEqual(child.missingPassthrough, ["NOT_SET"]);
});

Deno.test("childEnvironment() with inherit-env passes everything, the manifest env winning", () => {
  const { env, origins } = childEnvironment(PARENT, {
    inheritEnv: true,
    manifestEnv: { HOME: "/srv" },
    os: "linux",
  });
  assert.equal(env.AWS_SECRET_ACCESS_KEY, "aws");
  assert.equal(origins.AWS_SECRET_ACCESS_KEY, "inherited");
  assert.equal(env.HOME, "/srv");
  assert.equal(origins.HOME, "manifest");
});

Deno.test("childEnvironment() matches names case-insensitively on Windows", () => {
  const { env } = childEnvironment(
    { Path: "C:\\Windows", SystemRoot: "C:\\Windows", GH_TOKEN: "x" },
    { manifestEnv: { PATH: "C:\\tools" }, passthrough: ["gh_token"], os: "windows" },
  );
  assert.deepEqual(env, { SystemRoot: "C:\\Windows", GH_TOKEN: "x", PATH: "C:\\tools" });
  assert.equal(isBaseEnvName("Path", { os: "windows" }), true);
  assert.equal(isBaseEnvName("Path", { os: "linux" }), false);
});

Deno.test("envNamesByOrigin() groups and sorts names", () => {
  assert.deepEqual(envNamesByOrigin({ PATH: "base", B: "manifest", A: "manifest", T: "passthrough" }), {
    base: ["PATH"],
    passthrough: ["T"],
    inherited: [],
    manifest: ["A", "B"],
  });
});
