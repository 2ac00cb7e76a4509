/**
 * `cargo-agents mcp login <server>` and `mcp logout <server>`: OAuth sign-in and sign-out for a
 * remote MCP server of this workspace. Login is a command (not something the meta-server does)
 * because the meta-server is a child of the agent with no terminal: it cannot open a browser or
 * show a URL.
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import { closestMatch, UserError } from "../diagnostics.ts";
import { createGuardedFetch, displayUrl } from "../net/mod.ts";
import { resolveConfigDir } from "../plugins/config.ts";
import { loadResolution } from "../catalog/resolve.ts";
import type { HttpServerSpec, Resolution } from "../plugins/mod.ts";
import { DEFAULT_CALLBACK_TIMEOUT_MS, openBrowser, signIn, signOut } from "../auth/mod.ts";

/** Environment variable overriding the browser wait, in milliseconds (tests). */
export const LOGIN_TIMEOUT_ENV_VAR = "SYMPOSIUM_LOGIN_TIMEOUT_MS";

/**
 * Finds the remote server `name` among the servers that apply to this workspace.
 *
 * @throws {UserError} `LOGIN_UNKNOWN_SERVER` (with a did-you-mean hint), `LOGIN_NOT_APPLICABLE`
 *   (declared but its `depends-on` does not hold here), `LOGIN_SERVER_REFUSED` (the manifest entry
 *   is refused; the refusal's reason, hint and location are kept), `LOGIN_LOCAL_SERVER` (a stdio
 *   server), `LOGIN_HEADER_AUTH` (the manifest sends its own `Authorization` header).
 */
export function findRemoteServer(resolution: Resolution, name: string): HttpServerSpec {
  const spec = resolution.servers.find((s) => s.name === name);
  if (spec === undefined) {
    const refusal = resolution.refused.find((r) => r.server === name);
    if (refusal) {
      throw new UserError(
        "LOGIN_SERVER_REFUSED",
        `Cannot sign in to "${name}": the server is refused: ${refusal.reason}`,
        {
          hint: refusal.hint,
          location: refusal.location,
        },
      );
    }
    const dormant = resolution.dormant.find((d) => d.server === name);
    if (dormant) {
      throw new UserError(
        "LOGIN_NOT_APPLICABLE",
        `Cannot sign in to "${name}": it does not apply to this workspace (${dormant.reason})`,
        { hint: "run the command from inside a workspace the server applies to" },
      );
    }
    const known = [
      ...resolution.servers.map((s) => s.name),
      ...resolution.refused.map((r) => r.server),
      ...resolution.dormant.map((d) => d.server),
    ];
    const guess = closestMatch(name, known);
    throw new UserError(
      "LOGIN_UNKNOWN_SERVER",
      `Cannot sign in to "${name}": no MCP server of that name applies here`,
      {
        hint: guess !== undefined
          ? `did you mean "${guess}"?`
          : "run `cargo agents status` to list the servers of this workspace",
      },
    );
  }
  if (spec.transport !== "http") {
    throw new UserError(
      "LOGIN_LOCAL_SERVER",
      `Cannot sign in to "${name}": it is a local (stdio) server; sign-in applies to remote servers only`,
      { location: spec.location },
    );
  }
  if (Object.keys(spec.headers).some((k) => k.toLowerCase() === "authorization")) {
    throw new UserError(
      "LOGIN_HEADER_AUTH",
      `Cannot sign in to "${name}": its manifest sets an Authorization header, which is sent instead of a sign-in`,
      {
        hint: "remove the `Authorization` header from the manifest to use OAuth sign-in",
        location: spec.location,
      },
    );
  }
  return spec;
}

/**
 * Signs in to a remote server: prints the authorization URL (always, for SSH sessions) and opens
 * the browser, waits up to 300 s for the redirect, stores the tokens.
 *
 * @returns 0 when signed in.
 * @throws {UserError} See {@link findRemoteServer} and `signIn()` (`LOGIN_*` codes, endpoint policy).
 */
export async function runLogin(options: { server: string }, ctx: CommandContext): Promise<number> {
  const { configDir, resolution } = await loadResolution({
    cwd: ctx.cwd,
    env: ctx.env,
    homeDir: ctx.homeDir,
  });
  const spec = findRemoteServer(resolution, options.server);
  const timeoutOverride = Number(ctx.env[LOGIN_TIMEOUT_ENV_VAR]);
  const timeoutMs = Number.isFinite(timeoutOverride) && timeoutOverride > 0
    ? timeoutOverride
    : DEFAULT_CALLBACK_TIMEOUT_MS;
  const fetch = createGuardedFetch({ server: spec.name });
  try {
    ctx.writeErr(`Signing in to "${spec.name}" (${displayUrl(spec.urlTemplate ?? spec.url)})\n`);
    const result = await signIn(spec, {
      configDir,
      fetch,
      timeoutMs,
      signal: ctx.signal,
      onStepUpScopes(scopes) {
        ctx.writeErr(
          `Also asking for ${scopes.map((s) => `"${s}"`).join(", ")}: ${spec.name} answered a call with ` +
            "403 insufficient_scope asking for more permissions\n",
        );
      },
      onAuthorizationUrl(url) {
        ctx.writeOut(`Open this URL in a browser to sign in:\n  ${url}\n`);
        openBrowser(url, { env: ctx.env });
        ctx.writeErr(`Waiting for the browser to come back (up to ${Math.round(timeoutMs / 1000)} s)...\n`);
      },
    });
    const expiry = result.expiresAtMs === undefined
      ? ""
      : `; the token expires in ${Math.max(1, Math.round((result.expiresAtMs - Date.now()) / 60_000))} min`;
    const renews = result.hasRefreshToken ? " and renews itself" : "";
    ctx.writeOut(`${spec.name}: signed in${expiry}${renews}\n`);
    return 0;
  } finally {
    fetch.close();
  }
}

/**
 * Signs out of a remote server by name (also outside the workspace it applies to): revokes the
 * stored tokens when the authorization server offers RFC 7009 revocation, then deletes the
 * credential file. Running it twice is harmless.
 *
 * @returns 0, also when there was nothing to sign out of.
 */
export async function runLogout(options: { server: string }, ctx: CommandContext): Promise<number> {
  let configDir = resolveConfigDir(ctx.env, ctx.homeDir);
  let spec: HttpServerSpec | undefined;
  try {
    const loaded = await loadResolution({ cwd: ctx.cwd, env: ctx.env, homeDir: ctx.homeDir });
    configDir = loaded.configDir;
    const found = loaded.resolution.servers.find((s) => s.name === options.server);
    if (found?.transport === "http") spec = found;
  } catch (error) {
    // Logout must work even where nothing resolves; only the manifest's client is missed then.
    if (ctx.verbose) ctx.writeErr(`note: cannot read the workspace's servers: ${String(error)}\n`);
  }
  const fetch = createGuardedFetch({ server: options.server });
  try {
    const result = await signOut(configDir, {
      name: options.server,
      clientId: spec?.clientId,
      clientSecret: spec?.clientSecret,
    }, { fetch });
    if (!result.existed) {
      ctx.writeOut(`${options.server}: not signed in\n`);
    } else if (result.revoked) {
      ctx.writeOut(`${options.server}: signed out (tokens revoked at the server)\n`);
    } else {
      ctx.writeOut(`${options.server}: signed out (${result.revocationNote ?? "tokens not revoked"})\n`);
    }
    return 0;
  } finally {
    fetch.close();
  }
}
