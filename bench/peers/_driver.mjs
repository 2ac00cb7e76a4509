/**
 * What every driver of `bench/peers.ts` shares: the line protocol with the harness, the three scripts'
 * expected results, and loading a package from the peer's install folder.
 *
 * Protocol (stdout, one JSON object a line, each prefixed with `@@peer ` so that anything a library prints
 * on stdout is told apart): first `{"event":"first","ms":…}` once the driver has connected to the backing
 * server and run one echo (or `{"event":"error","message":…}` and exit 1); then, for each request read on
 * stdin, `{"id":…,"ms":…}` or `{"id":…,"error":…}`. Requests: `{"id","op":"run","kind"}` times one run of
 * `kind` (`return1`, `echo`, `seq200`), ms; `{"id","op":"loop","n"}` runs `n` echoes back to back;
 * `{"id","op":"close"}` closes the client and exits 0. Nothing is read from the network but loopback.
 *
 * Environment: `PEER_SERVER` = JSON `{ command, args }` of the backing MCP server; `PEER_PREFIX` = the npm
 * install folder of the peer (`npm install --prefix`).
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

/** What each run kind must return (`return1`: `return 1`; `echo`: one echo; `seq200`: 200 echoes, counted). */
export const EXPECTED = { return1: 1, echo: "Echo: x", seq200: 200 };

/** The backing server to spawn: `{ command: string, args: string[] }`. */
export function backingServer() {
  return JSON.parse(process.env.PEER_SERVER ?? "null");
}

/**
 * Imports package `name` as installed under `PEER_PREFIX`: its `exports[subpath]` import entry (default
 * `"."`), else `module`, else `main`.
 */
export function importPeer(name, subpath = ".") {
  const dir = `${process.env.PEER_PREFIX}/node_modules/${name}`;
  const pkg = JSON.parse(readFileSync(`${dir}/package.json`, "utf8"));
  const dot = typeof pkg.exports === "object" ? pkg.exports[subpath] ?? pkg.exports : pkg.exports;
  const entry = typeof dot === "string" ? dot : dot?.import?.default ?? dot?.import ?? dot?.default ??
    pkg.module ?? pkg.main ?? "index.js";
  return import(pathToFileURL(`${dir}/${entry}`).href);
}

function send(message) {
  process.stdout.write(`@@peer ${JSON.stringify(message)}\n`);
}

async function checked(run, kind) {
  const got = await run(kind);
  if (JSON.stringify(got) !== JSON.stringify(EXPECTED[kind])) {
    throw new Error(`${kind} returned ${JSON.stringify(got)?.slice(0, 300)}, expected ${EXPECTED[kind]}`);
  }
}

async function answer(peer, request) {
  if (request.op === "close") {
    await peer.close();
    send({ id: request.id, ms: 0 });
    process.exit(0);
  }
  const t0 = performance.now();
  if (request.op === "loop") { for (let i = 0; i < request.n; i++) await checked(peer.run, "echo"); }
  else await checked(peer.run, request.kind);
  return performance.now() - t0;
}

/**
 * Runs a driver: `connect()` resolves to `{ run(kind) → Promise<result>, close() → Promise<void> }`. Library
 * output on `console.log` goes to stderr, which the harness discards.
 */
export async function serveDriver(connect) {
  console.log = console.info = console.debug = console.error;
  let peer;
  try {
    const t0 = performance.now();
    peer = await connect();
    await checked(peer.run, "echo");
    send({ event: "first", ms: performance.now() - t0 });
  } catch (error) {
    send({ event: "error", message: String(error?.stack ?? error) });
    process.exit(1);
  }
  let queue = Promise.resolve();
  createInterface({ input: process.stdin }).on("line", (line) => {
    const request = JSON.parse(line);
    queue = queue.then(() => answer(peer, request)).then(
      (ms) => send({ id: request.id, ms }),
      (error) => send({ id: request.id, error: String(error?.stack ?? error) }),
    );
  }).on("close", () => queue.then(() => process.exit(0))); // The harness went away.
}
