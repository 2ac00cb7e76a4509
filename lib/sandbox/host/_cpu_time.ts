/**
 * CPU time of a process as the kernel counts it, for the host's second wall while a run's deadline clock
 * is held: a guest that computes inside one native built-in while the user is asked cannot be interrupted
 * by QuickJS, but its CPU time shows it.
 *
 * @module
 */

/** Kernel clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on every Linux ABI in use). */
const USER_HZ = 100;

/**
 * User plus system CPU time of process `pid`, milliseconds (10 ms steps), from `/proc/<pid>/stat`.
 *
 * @returns `undefined` where there is no `/proc` (not Linux) or the process is gone.
 */
export function processCpuTimeMs(pid: number): number | undefined {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    // No procfs here, or the process has exited.
    return undefined;
  }
  // Fields after the command name, which is in parentheses and may hold spaces: state is field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1000) / USER_HZ;
}
