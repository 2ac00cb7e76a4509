// Crash-injection child for tests/sync_atomic_write_test.ts: replaces the file Deno.args[0] with
// Deno.args[1] through writeFileAtomic, and stops between the write and the rename, printing
// "PAUSED <temp path>" so the test can SIGKILL it there.
import { writeFileAtomic } from "../../lib/sync/atomic_write.ts";

const [path, text] = Deno.args;
await writeFileAtomic(path!, text!, {
  beforeRename: async (temp) => {
    console.log(`PAUSED ${temp}`);
    await new Promise((resolve) => setTimeout(resolve, 120_000));
  },
});
console.log("RENAMED");
