/**
 * Log — the host's diagnostics, one line each on stderr. Stdout belongs to Chrome's framing, so nothing else in the
 * host may print; Chrome forwards a host's stderr to its own log. It does not log message contents (page data).
 */
export const log = (line: string): void => {
  process.stderr.write(`pedelec-native-host[${process.pid}]: ${line}\n`)
}
