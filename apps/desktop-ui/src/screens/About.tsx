/**
 * About (Health) — the version of every part (the app, Core, the protocol), `PEDELEC_HOME`, Core's pid and uptime,
 * its socket and where the logs are; the native host's registration per detected browser (registered / missing /
 * stale, with Register and Repair, answered by main: HealthNativeHost.tsx); and the self-test: the hops main runs
 * without a browser, with their latencies, and the command for the browser's hops (HealthSelfTest.tsx).
 */
import type { CoreStatus } from "@pedelec/contracts/Desktop"
import type { AppInfo } from "@pedelec/contracts/link/DesktopLink"
import { useCallback } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { CopyButton, ErrorNote, type Loaded, Loading, ScreenHeader, useLoad } from "../ui/Kit.tsx"
import { NativeHost } from "./HealthNativeHost.tsx"
import { SelfTest } from "./HealthSelfTest.tsx"

const uptime = (ms: number) => {
  const minutes = Math.floor(ms / 60_000)
  return minutes < 1
    ? "under a minute"
    : minutes < 120
      ? `${minutes} min`
      : `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

const Path = ({ value }: { readonly value: string }) => (
  <dd class="mono with-copy">
    <span>{value}</span>
    <CopyButton text={value} />
  </dd>
)

const Versions = ({ status, app }: { readonly status: CoreStatus; readonly app: Loaded<AppInfo> }) => (
  <section class="panel">
    <h2>Versions</h2>
    <dl class="facts wide">
      <dt>Desktop app</dt>
      <dd class="mono">
        {app.state === "ready" ? `${app.value.appVersion} (${app.value.transport}, ${app.value.platform})` : "—"}
      </dd>
      <dt>Core</dt>
      <dd class="mono">{status.coreVersion}</dd>
      <dt>Protocol</dt>
      <dd class="mono">{status.protocolVersion}</dd>
    </dl>
  </section>
)

const Core = ({ status }: { readonly status: CoreStatus }) => (
  <section class="panel">
    <h2>Core</h2>
    <dl class="facts wide">
      <dt>Process</dt>
      <dd class="mono">
        pid {status.pid} · up {uptime(status.now - status.startedAt)}
      </dd>
      <dt>Live sessions</dt>
      <dd>{status.liveSessions}</dd>
      <dt>PEDELEC_HOME</dt>
      <Path value={status.home} />
      <dt>Socket</dt>
      <Path value={status.socketPath} />
      <dt>Logs</dt>
      <Path value={status.logsDir} />
    </dl>
    <p class="hint">One log per session, named by its id (a .jsonl file of its events).</p>
  </section>
)

export const About = () => {
  const loadStatus = useCallback(() => call("desktop.status", {}), [])
  const loadApp = useCallback(() => call("app.info", {}), [])
  const [status, reload] = useLoad(loadStatus)
  const [app] = useLoad(loadApp)
  return (
    <div class="screen" data-screen="about">
      <ScreenHeader title="About" subtitle="What runs, where it keeps its files, and whether browsers can reach it." />
      {status.state === "loading" ? <Loading label="Asking Core…" /> : null}
      {status.state === "failed" ? <ErrorNote error={status.error} onRetry={() => void reload()} /> : null}
      {status.state === "ready" ? (
        <>
          <Versions status={status.value} app={app} />
          <Core status={status.value} />
        </>
      ) : null}
      <NativeHost />
      <SelfTest />
    </div>
  )
}
