// The "other program" of tests/sync/concurrency_test.ts, the way an agent rewrites its own config
// (a temporary file renamed over it). Arguments: <path> [<new text file>]. It checks every ms that
// <path> exists. With a <new text file>, it replaces <path> with that content once, in the middle
// of a `sync`'s merge: once the sync took its lock (`.<name>.cargo-agents.lock`, holding its
// process id) and then used 150 ms of CPU (/proc/<pid>/stat): it read the file in a few ms, and
// merging 5 MB takes it far longer. It stops when stdin closes and prints
// `{"absent": <times the file was missing>, "replaced": <bool>, "duringMerge": <the sync still held its lock>}`.
const [path, newTextFile] = Deno.args as [string, string | undefined];
const dir = path.slice(0, path.lastIndexOf("/"));
const name = path.slice(path.lastIndexOf("/") + 1);
const lockPath = `${dir}/.${name}.cargo-agents.lock`;
const newText = newTextFile === undefined ? undefined : Deno.readTextFileSync(newTextFile);
let stop = false;
(async () => {
  for await (const _ of Deno.stdin.readable) {
    // Any input, or the end of it, stops the watch.
  }
  stop = true;
})();

/** CPU time of process `pid`, ms (/proc/<pid>/stat, through `cat`: Deno refuses /proc without -A). */
function cpuMs(pid: number): number {
  const out = new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stdout: "piped", stderr: "null" }).outputSync();
  const stat = new TextDecoder().decode(out.stdout);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU the sync uses after taking its lock before this program writes, ms. */
const MERGING_CPU_MS = 150;

let absent = 0;
let replaced = false;
let duringMerge = false;
let syncer: { pid: number; cpuAtLockMs: number } | undefined;
console.log("ready");
while (!stop) {
  try {
    Deno.lstatSync(path);
  } catch {
    absent++;
  }
  if (newText !== undefined && !replaced) {
    if (syncer === undefined) {
      const pid = Number.parseInt((() => {
        try {
          return Deno.readTextFileSync(lockPath);
        } catch {
          return "";
        }
      })(), 10);
      if (pid > 0) syncer = { pid, cpuAtLockMs: cpuMs(pid) };
    } else if (cpuMs(syncer.pid) - syncer.cpuAtLockMs >= MERGING_CPU_MS) {
      Deno.writeTextFileSync(`${path}.other`, newText);
      Deno.renameSync(`${path}.other`, path);
      replaced = true;
      try {
        // Still locked: the sync has read the file and not written it yet.
        if (Deno.readTextFileSync(lockPath) === `${syncer.pid}\n`) duringMerge = true;
      } catch {
        // The sync had finished already.
      }
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 1));
}
console.log(JSON.stringify({ absent, replaced, duringMerge }));
