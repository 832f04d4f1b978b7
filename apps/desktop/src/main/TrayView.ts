/**
 * TrayView — what the tray shows for what the app knows: the icon (a problem, sessions running, or idle), the
 * tooltip, and the menu (Open; the live sessions and End all; Start at login; Quit). A problem is Core out of reach
 * or the native host not registered, said as `CODE: message` so the user knows what to do. Pure: finding the facts is
 * DesktopApp's, drawing them ElectronTray's.
 */
import type { TrayItem, TrayView } from "./electron/ElectronTray.ts"

/** Something the user must fix, as every Pedelec error reads. */
export interface Problem {
  readonly code: string
  readonly message: string
}

export interface TrayFacts {
  /** Not asked yet (start-up), Core's live sessions of every origin, or why Core cannot be asked. */
  readonly core: "connecting" | { readonly sessions: number } | { readonly problem: Problem }
  /** Why registering the native host at start failed, if it did. */
  readonly registration: Problem | undefined
  /** Whether the app starts at login (Autostart); undefined where the OS offers no way to. */
  readonly openAtLogin: boolean | undefined
}

export const sessionsLabel = (count: number): string =>
  count === 0 ? "No sessions running" : count === 1 ? "1 session running" : `${count} sessions running`

/** A problem as every Pedelec error reads: `CODE: message`. */
export const said = (problem: Problem) => `${problem.code}: ${problem.message}`

/** The problems in the order a user should fix them: without Core nothing works. */
const problemsOf = (facts: TrayFacts): ReadonlyArray<Problem> => [
  ...(typeof facts.core === "object" && "problem" in facts.core ? [facts.core.problem] : []),
  ...(facts.registration === undefined ? [] : [facts.registration])
]

const liveCount = (facts: TrayFacts): number =>
  typeof facts.core === "object" && "sessions" in facts.core ? facts.core.sessions : 0

const sessionItems = (facts: TrayFacts): ReadonlyArray<TrayItem> => {
  if (facts.core === "connecting") return [{ kind: "label", label: "Connecting to Core…" }]
  if ("problem" in facts.core) return [{ kind: "label", label: "Core is not reachable" }]
  const count = facts.core.sessions
  return [
    {
      kind: "submenu",
      label: sessionsLabel(count),
      items: [{ kind: "action", action: "end-all", label: "End all sessions", enabled: count > 0 }]
    }
  ]
}

export const trayView = (facts: TrayFacts): TrayView => {
  const problems = problemsOf(facts)
  const sessions = liveCount(facts)
  const icon = problems.length > 0 ? "problem" : sessions > 0 ? "running" : "idle"
  const tooltip =
    problems.length > 0
      ? said(problems[0]!)
      : facts.core === "connecting"
        ? "Connecting to Core…"
        : sessions > 0
          ? sessionsLabel(sessions)
          : "Idle"
  const login: ReadonlyArray<TrayItem> =
    facts.openAtLogin === undefined
      ? []
      : [{ kind: "check", action: "start-at-login", label: "Start at login", checked: facts.openAtLogin }]
  return {
    icon,
    tooltip: `Pedelec — ${tooltip}`,
    items: [
      { kind: "action", action: "open", label: "Open Pedelec", enabled: true },
      ...problems.map((problem): TrayItem => ({ kind: "label", label: said(problem) })),
      { kind: "separator" },
      ...sessionItems(facts),
      { kind: "separator" },
      ...login,
      { kind: "action", action: "quit", label: "Quit Pedelec", enabled: true }
    ]
  }
}
