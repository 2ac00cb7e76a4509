// Runs the command in its arguments with stdin, stdout and stderr inherited, after setting O_NONBLOCK
// on the stdout it shares with that command (one open file description): what an agent does to the
// pipe it hands mcp-serve when it made its own end non-blocking. Linux (glibc) only.
// Usage: deno run -A nonblocking_stdout.ts <command> [args...]
const libc = Deno.dlopen("libc.so.6", {
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
});
const F_GETFL = 3;
const F_SETFL = 4;
const O_NONBLOCK = 0o4000;
const flags = libc.symbols.fcntl(1, F_GETFL, 0);
if (flags < 0 || libc.symbols.fcntl(1, F_SETFL, flags | O_NONBLOCK) < 0) {
  console.error("nonblocking_stdout: fcntl failed");
  Deno.exit(2);
}
const [command, ...args] = Deno.args;
const child = new Deno.Command(command!, { args, stdin: "inherit", stdout: "inherit", stderr: "inherit" })
  .spawn();
Deno.exit((await child.status).code);
