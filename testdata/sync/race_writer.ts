// The "other program" of tests/sync/atomic_write_test.ts's race. For each line `go <i> <path>` on
// stdin it replaces <path> 20 times, about every 0.2 ms, the way editors and agents write (a
// temporary file renamed over it), and before each write after the first it reads the file: if it
// finds `ours-<i>` there, the test's writer replaced one of this program's writes it never read
// (a lost update); if it finds no file at all, the writer had taken it away. Then it prints
// `done <i> <lost: 0|1> <absent: 0|1>`.
const WRITES = 20;
const PAUSE_MS = 0.2;
const decoder = new TextDecoder();
let buffer = "";
for await (const chunk of Deno.stdin.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  let newline: number;
  while ((newline = buffer.indexOf("\n")) >= 0) {
    const [verb, i, path] = buffer.slice(0, newline).split(" ");
    buffer = buffer.slice(newline + 1);
    if (verb !== "go" || path === undefined) continue;
    let lost = 0;
    let absent = 0;
    for (let k = 0; k < WRITES; k++) {
      if (k > 0) {
        const seen = await Deno.readTextFile(path).catch(() => undefined);
        if (seen === undefined) absent = 1;
        if (seen === `ours-${i}`) lost = 1;
      }
      const temp = `${path}.other-${i}-${k}`;
      await Deno.writeTextFile(temp, `other-${i}-${k}`);
      await Deno.rename(temp, path);
      const until = performance.now() + PAUSE_MS;
      while (performance.now() < until) {
        // Busy-wait: timers are too coarse for a 0.2 ms pause.
      }
    }
    console.log(`done ${i} ${lost} ${absent}`);
  }
}
