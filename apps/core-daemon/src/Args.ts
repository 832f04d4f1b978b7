/**
 * Args — pedelec-core's command line: `[--home <dir>] [--on-demand] [--detach]`, `--help`. Parsing only.
 */
export type Args =
  | { readonly kind: "run"; readonly home: string | undefined; readonly onDemand: boolean }
  | { readonly kind: "detach"; readonly home: string | undefined; readonly onDemand: boolean }
  | { readonly kind: "usage"; readonly error: string | undefined }

export const USAGE = `Usage: pedelec-core [--home <dir>] [--on-demand] [--detach]

Runs the Pedelec Core for one home (default: $PEDELEC_HOME, else ~/.pedelec).
  --home <dir>   use this Pedelec home
  --on-demand    exit after 10 idle minutes without a session (how the native host starts it)
  --detach       start in the background and return once it answers
  --help         show this text
`

export const parseArgs = (argv: ReadonlyArray<string>): Args => {
  let home: string | undefined
  let onDemand = false
  let detach = false
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]
    if (arg === "--help" || arg === "-h") return { kind: "usage", error: undefined }
    if (arg === "--on-demand") onDemand = true
    else if (arg === "--detach") detach = true
    else if (arg === "--home") {
      home = argv[++index]
      if (home === undefined || home.length === 0) return { kind: "usage", error: "--home needs a directory" }
    } else return { kind: "usage", error: `unknown argument ${JSON.stringify(arg)}` }
  }
  return { kind: detach ? "detach" : "run", home, onDemand }
}
