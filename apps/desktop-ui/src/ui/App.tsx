/**
 * App — the window: a left navigation, the reconnecting banner (the last screen stays visible under it, never a
 * blank window), the screen on show, and the question before leaving a screen with unsaved changes. Each screen
 * loads its own data.
 */
import { signal } from "@preact/signals"
import type { FunctionComponent } from "preact"
import { connection, lostBecause } from "../bridge/Desktop.ts"
import { About } from "../screens/About.tsx"
import { Effort } from "../screens/Effort.tsx"
import { Monitor } from "../screens/Monitor.tsx"
import { Providers } from "../screens/Providers.tsx"
import { Sessions } from "../screens/Sessions.tsx"
import { Settings } from "../screens/Settings.tsx"
import { Sites } from "../screens/Sites.tsx"
import { unsavedChanges } from "./Unsaved.ts"

const SCREENS = {
  providers: { title: "Providers", view: Providers },
  settings: { title: "Settings", view: Settings },
  effort: { title: "Effort", view: Effort },
  sessions: { title: "Sessions", view: Sessions },
  monitor: { title: "Monitor", view: Monitor },
  sites: { title: "Sites", view: Sites },
  about: { title: "About", view: About }
} as const satisfies Record<string, { readonly title: string; readonly view: FunctionComponent }>
type ScreenName = keyof typeof SCREENS

const current = signal<ScreenName>("providers")
/** Where the user asked to go while the screen had unsaved changes. */
const leaving = signal<ScreenName | undefined>(undefined)

/** Shows a screen (asking first when this one has unsaved changes); a screen's action may lead to another. */
export const go = (name: ScreenName) => {
  if (name === current.value) return
  if (unsavedChanges.value) leaving.value = name
  else current.value = name
}

const Nav = () => (
  <nav class="nav" aria-label="Sections">
    <div class="nav-inner">
      <div class="brand">
        <span class="logo" aria-hidden="true" />
        Pedelec
      </div>
      {(Object.keys(SCREENS) as Array<ScreenName>).map((name) => (
        <button
          type="button"
          class={name === current.value ? "nav-item active" : "nav-item"}
          aria-current={name === current.value ? "page" : undefined}
          onClick={() => go(name)}
          key={name}
        >
          {SCREENS[name].title}
        </button>
      ))}
      <div class={`nav-foot ${connection.value}`}>
        <span class="dot" aria-hidden="true" />
        {connection.value === "connected" ? "Connected to Core" : "Reconnecting…"}
      </div>
    </div>
  </nav>
)

const Reconnecting = () =>
  connection.value === "reconnecting" ? (
    <div class="banner" role="status" data-state="reconnecting">
      <span class="spinner" aria-hidden="true" />
      <div>
        <strong>Reconnecting to Core…</strong>
        {lostBecause.value === undefined ? null : (
          <p>
            <code class="code">{lostBecause.value.code}</code>: {lostBecause.value.message}
          </p>
        )}
      </div>
    </div>
  ) : null

const LeaveDialog = () => {
  const target = leaving.value
  if (target === undefined) return null
  const discard = () => {
    unsavedChanges.value = false
    leaving.value = undefined
    current.value = target
  }
  return (
    <div class="scrim">
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="leave-title">
        <h2 id="leave-title">Discard unsaved changes?</h2>
        <p>Your edits on this screen have not been saved.</p>
        <div class="actions">
          <button type="button" class="button" onClick={() => (leaving.value = undefined)}>
            Keep editing
          </button>
          <button type="button" class="button danger" onClick={discard}>
            Discard
          </button>
        </div>
      </div>
    </div>
  )
}

export const App = () => {
  const View = SCREENS[current.value].view
  return (
    <div class="shell">
      <Nav />
      <main class={connection.value === "reconnecting" ? "content stale" : "content"}>
        <Reconnecting />
        <View />
      </main>
      <LeaveDialog />
    </div>
  )
}
