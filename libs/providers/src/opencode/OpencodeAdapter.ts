import type { EffortSupport } from "@pedelec/contracts/Provider"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"
import { type CliAdapterOptions, makeCliAdapter } from "../CliAdapter.ts"
import {
  type EffortAllowList,
  effortProfilesOf,
  type ProviderAdapter,
  type SessionProcessOptions,
  type TurnInput
} from "../Provider.ts"
import { makeTurnProcess } from "../TurnProcess.ts"
import { OpencodeTurnDecoder } from "./OpencodeEvents.ts"

const PROVIDER = "opencode"
const NAME = "opencode"
/** After the last step, how long opencode gets to exit on its own (it is still saving the session). */
const EXIT_WAIT_MS = 5_000
/** opencode kills a shell command after 2 minutes by default; a page tool call may legitimately last its longest. */
const BASH_TIMEOUT_MS = TOOL_LIMITS.maxTimeoutMs * TOOL_LIMITS.maxProgressFactor + 60_000
export const OPENCODE_AGENT = "pedelec"

const EFFORT: EffortSupport = {
  supported: true,
  note:
    "opencode's --variant picks a model variant, the provider's reasoning effort (e.g. minimal, low, medium, high, " +
    "max, as the model defines them). A profile holds it as one token, e.g. --variant=high; opencode ignores a " +
    "variant the model does not have."
}
/** One-token form only: a bare "high" would reach opencode as a prompt argument. */
export const OPENCODE_EFFORT_ALLOW_LIST: EffortAllowList = {
  argv: [/^--variant=[a-z][a-z0-9_-]{0,31}$/],
  env: []
}

/** The least-privilege agent; see the header for what each rule is for. */
export const LEAST_PRIVILEGE_CONFIG = {
  $schema: "https://opencode.ai/config.json",
  agent: {
    [OPENCODE_AGENT]: {
      mode: "primary",
      description: "A web page's agent through Pedelec: workspace files and pedelec-cli / pedelec-deno only.",
      permission: {
        "*": "deny",
        read: "allow",
        edit: "allow",
        glob: "allow",
        grep: "allow",
        list: "allow",
        todowrite: "allow",
        external_directory: "deny",
        bash: { "*": "deny", "pedelec-cli *": "allow", "pedelec-deno *": "allow" }
      }
    }
  }
}

const NOT_FOUND =
  "opencode (the `opencode` command) was not found on PATH or in the usual install folders. Install it " +
  "(`npm install -g opencode-ai`), set up a provider once by running `opencode auth login`, then rescan providers."

/** The argv for one turn; exported for tests and the docs. */
export const opencodeArgs = (session: SessionProcessOptions, turn: TurnInput): Array<string> => [
  "run",
  "--format",
  "json",
  "--dir",
  session.workspace,
  ...(session.fullAccess ? ["--auto"] : ["--agent", OPENCODE_AGENT]),
  ...(session.model === undefined ? [] : ["-m", session.model]),
  ...(turn.providerSessionId === undefined ? [] : ["-s", turn.providerSessionId]),
  ...session.effort.argv
]

/** The environment on top of the session's: no updates or sharing, long shell timeouts, and the mode's config. */
export const opencodeEnv = (session: SessionProcessOptions): Record<string, string> => ({
  ...session.env,
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  // A page's conversation is never published to opencode's share service.
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS: String(BASH_TIMEOUT_MS),
  ...(session.fullAccess
    ? {}
    : {
        OPENCODE_CONFIG_CONTENT: JSON.stringify(LEAST_PRIVILEGE_CONFIG),
        OPENCODE_DISABLE_PROJECT_CONFIG: "1"
      })
})

export const makeOpencodeAdapter = (options: CliAdapterOptions = {}): ProviderAdapter =>
  makeCliAdapter(
    {
      about: { code: PROVIDER, name: NAME, experimental: false, effort: EFFORT },
      find: { commands: ["opencode"], versionArgs: ["--version"] },
      notFound: NOT_FOUND,
      effortAllowList: OPENCODE_EFFORT_ALLOW_LIST,
      defaultEffort: effortProfilesOf((level) => `--variant=${level}`),
      sessionProcess: (cli, session) =>
        makeTurnProcess({
          provider: PROVIDER,
          label: "opencode",
          spawn: (turn: TurnInput) => ({
            command: cli.path,
            args: opencodeArgs(session, turn),
            cwd: session.workspace,
            env: opencodeEnv(session),
            inheritEnv: true,
            stdin: turn.prompt
          }),
          decoder: () => new OpencodeTurnDecoder(),
          exitWaitMs: EXIT_WAIT_MS,
          // opencode prints a step_finish before a clean exit; exit 0 without one still finished the turn.
          cleanExitCompletes: true
        })
    },
    options
  )

/** The `opencode` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const OpencodeAdapter: ProviderAdapter = makeOpencodeAdapter()
