/**
 * ProcessAlive — whether a pid names a running process, for judging a stale `core.json` or `core.lock`. Effect-free,
 * so pedelec-cli's agent path can use it too. Telling a reused pid apart is ProcessTree's job, not this one's.
 */

/** `kill(pid, 0)`: ESRCH means gone; EPERM means alive under another user, which still counts as alive. */
export const isProcessAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
