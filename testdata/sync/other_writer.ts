// The "other program" of tests/sync/concurrency_test.ts, the way an agent rewrites its own config
// (a temporary file renamed over it). Arguments: <path> [<new text file>]. It checks every ms that
// <path> exists, and with a <new text file>, as soon as a `sync` starts working on it (its lock
// file or a temporary file of it appears beside it), it replaces <path> with that content, once. It stops
// when stdin closes and prints `{"absent": <times the file was missing>, "replaced": <bool>}`.
const [path, newTextFile] = Deno.args as [string, string | undefined];
const dir = path.slice(0, path.lastIndexOf("/"));
const name = path.slice(path.lastIndexOf("/") + 1);
const newText = newTextFile === undefined ? undefined : Deno.readTextFileSync(newTextFile);
let stop = false;
(async () => {
  for await (const _ of Deno.stdin.readable) {
    // Any input, or the end of it, stops the watch.
  }
  stop = true;
})();
let absent = 0;
let replaced = false;
console.log("ready");
while (!stop) {
  try {
    Deno.lstatSync(path);
  } catch {
    absent++;
  }
  if (newText !== undefined && !replaced) {
    const started = [...Deno.readDirSync(dir)].some((e) =>
      e.name === `.${name}.cargo-agents.lock` || (e.name.startsWith(`.${name}.`) && e.name.endsWith(".tmp"))
    );
    if (started) {
      Deno.writeTextFileSync(`${path}.other`, newText);
      Deno.renameSync(`${path}.other`, path);
      replaced = true;
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 1));
}
console.log(JSON.stringify({ absent, replaced }));
