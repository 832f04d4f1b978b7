/**
 * Kit — the renderer's few shared pieces: loading a screen's data (again after a reconnect), and the states every
 * screen shows the same way (loading, empty, an error as `CODE: message` with what to do), a copy button, a field
 * with its error, a badge. Screens own their data and layout; this file owns no state of its own.
 */
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useState } from "preact/hooks"
import { connection, generation, isGone, type Outcome } from "../bridge/Desktop.ts"

export type Loaded<A> =
  | { readonly state: "loading" }
  | { readonly state: "ready"; readonly value: A }
  | { readonly state: "failed"; readonly error: PedelecErrorWire }

/** Runs `load` now, on `reload`, and each time the connection comes back; keeps the last value while reloading. */
export const useLoad = <A,>(load: () => Promise<Outcome<A>>): [Loaded<A>, () => Promise<void>, (value: A) => void] => {
  const [loaded, setLoaded] = useState<Loaded<A>>({ state: "loading" })
  const reload = useCallback(async () => {
    const outcome = await load()
    setLoaded(outcome.ok ? { state: "ready", value: outcome.value } : { state: "failed", error: outcome.error })
  }, [load])
  const round = generation.value
  useEffect(() => {
    void round
    void reload()
  }, [reload, round])
  const set = useCallback((value: A) => setLoaded({ state: "ready", value }), [])
  return [loaded, reload, set]
}

export const Loading = ({ label }: { readonly label: string }) => (
  <div class="state loading" role="status">
    <span class="spinner" aria-hidden="true" />
    {label}
  </div>
)

export const Empty = ({ title, children }: { readonly title: string; readonly children?: ComponentChildren }) => (
  <div class="state empty">
    <strong>{title}</strong>
    {children === undefined ? null : <p>{children}</p>}
  </div>
)

/**
 * `CODE: message`, and what the user can do about it where the screen knows better than the message. While the app
 * reconnects, the banner already says why, so a screen's own "Core is gone" waits quietly instead of repeating it.
 */
export const ErrorNote = (props: {
  readonly error: PedelecErrorWire
  readonly todo?: string
  readonly onRetry?: () => void
}) =>
  connection.value === "reconnecting" && isGone(props.error) ? (
    <Loading label="Waiting for Core…" />
  ) : (
    <div class="error-note" role="alert">
      <p>
        <code class="code">{props.error.code}</code>: {props.error.message}
      </p>
      {props.todo === undefined ? null : <p class="todo">{props.todo}</p>}
      {props.onRetry === undefined ? null : (
        <button type="button" class="button" onClick={props.onRetry}>
          Try again
        </button>
      )}
    </div>
  )

export const CopyButton = ({ text, label = "Copy" }: { readonly text: string; readonly label?: string }) => {
  const [copied, setCopied] = useState<"idle" | "copied" | "failed">("idle")
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => setCopied("copied"),
      () => setCopied("failed")
    )
  const shown = copied === "copied" ? "Copied" : copied === "failed" ? "Select it to copy" : label
  return (
    <button type="button" class="button small" onClick={copy} title={`Copy ${text}`}>
      {shown}
    </button>
  )
}

export const Field = (props: {
  readonly label: string
  readonly id: string
  readonly error?: string | undefined
  readonly hint?: string
  readonly children: ComponentChildren
}) => (
  <div class={props.error === undefined ? "field" : "field invalid"}>
    <label for={props.id}>{props.label}</label>
    {props.children}
    {props.error === undefined ? (
      props.hint === undefined ? null : (
        <p class="hint">{props.hint}</p>
      )
    ) : (
      <p class="field-error" id={`${props.id}-error`} role="alert">
        {props.error}
      </p>
    )}
  </div>
)

export type Tone = "ok" | "warn" | "bad" | "neutral" | "info"

export const Badge = ({ tone, children }: { readonly tone: Tone; readonly children: ComponentChildren }) => (
  <span class={`badge ${tone}`}>{children}</span>
)

export const ScreenHeader = (props: {
  readonly title: string
  readonly subtitle: string
  readonly children?: ComponentChildren
}) => (
  <header class="screen-header">
    <div>
      <h1>{props.title}</h1>
      <p class="subtitle">{props.subtitle}</p>
    </div>
    <div class="actions">{props.children}</div>
  </header>
)

const UNITS: ReadonlyArray<readonly [number, string]> = [
  [86_400_000, "d"],
  [3_600_000, "h"],
  [60_000, "min"],
  [1_000, "s"]
]

/** "3 min ago": coarse on purpose, a list refreshes it only when something changes. */
export const ago = (at: number, now: number) => {
  const elapsed = Math.max(0, now - at)
  const unit = UNITS.find(([ms]) => elapsed >= ms)
  return unit === undefined ? "just now" : `${Math.floor(elapsed / unit[0])} ${unit[1]} ago`
}
