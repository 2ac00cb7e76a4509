/**
 * What an idle session costs: the CPU of `mcp-serve`'s whole process tree while nothing happens, after one
 * `execute` that starts the bench world's three stdio servers (filesystem, memory, everything). Counts, in
 * clock ticks of 10 ms, utime + stime + cutime + cstime of `mcp-serve` and of every live descendant (the
 * servers, the sandbox process), so short-lived children such as `ps` count through their parent's cutime.
 *
 * `deno run -A bench/idle_cpu.ts [--checkout=/other/repo/] [--seconds=60] [--after=0]` (`-A`: Deno reads
 * `/proc` only with every permission; Linux only): measures for `seconds`, starting `after` seconds past the
 * `execute`. Compare a before and an after interleaved (A B A B): the figures are
 * CPU time, yet a loaded machine stretches them a little.
 *
 * @module
 */
import { connectMetaServer, makeWorld, REPO } from "./_world.ts";

const arg = (name: string) => Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const CHECKOUT = arg("checkout") ?? REPO;
const IDLE_MS = Number(arg("seconds") ?? 60) * 1_000;
const AFTER_MS = Number(arg("after") ?? 0) * 1_000;

/** One process's parent and CPU ticks (its own, and those of its children it reaped). */
function readStat(pid: number): { ppid: number; ticks: number } | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return undefined; // It ended between the listing and the read.
  }
  // After "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return { ppid: Number(fields[1]), ticks };
}

/** CPU ticks of `root` and every live descendant, with the number of processes. */
function treeTicks(root: number): { ticks: number; processes: number } {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of Deno.readDirSync("/proc")) {
    const stat = /^\d+$/.test(entry.name) ? readStat(Number(entry.name)) : undefined;
    if (stat) stats.set(Number(entry.name), stat);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, stat] of stats) if (stat.ppid === tree[i]) tree.push(pid);
  }
  return { ticks: tree.reduce((sum, pid) => sum + (stats.get(pid)?.ticks ?? 0), 0), processes: tree.length };
}

const world = await makeWorld(10, 200);
const { client, pid } = await connectMetaServer(world, CHECKOUT);
try {
  const script = 'await memory.read_graph({}); await everything.echo({ message: "hi" }); ' +
    "await filesystem.list_allowed_directories({}); return 1;";
  const result = await client.callTool({ name: "execute", arguments: { script } });
  if (result.isError) throw new Error(`the execute failed: ${JSON.stringify(result.content)}`);
  await new Promise((resolve) => setTimeout(resolve, AFTER_MS));
  const before = treeTicks(pid);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const after = treeTicks(pid);
  const cpuMs = (after.ticks - before.ticks) * 10;
  console.log(
    `${CHECKOUT}: ${cpuMs} ms of CPU in ${IDLE_MS / 1_000} s idle from ${AFTER_MS / 1_000} s on (${
      (cpuMs / IDLE_MS * 100).toFixed(2)
    } % ` +
      `of a core), ${after.processes} processes`,
  );
} finally {
  await client.close();
  await world.remove();
}
