/**
 * About — the app's and Core's versions, `PEDELEC_HOME`, Core's pid and uptime, its socket and where the logs are.
 * Native host registration and the self-test (the rest of Health) are not here yet.
 */
import { useCallback } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { ErrorNote, Loading, ScreenHeader, useLoad } from "../ui/Kit.tsx"

const uptime = (ms: number) => {
  const minutes = Math.floor(ms / 60_000)
  return minutes < 1
    ? "under a minute"
    : minutes < 120
      ? `${minutes} min`
      : `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

export const About = () => {
  const loadStatus = useCallback(() => call("desktop.status", {}), [])
  const loadApp = useCallback(() => call("app.info", {}), [])
  const [status, reload] = useLoad(loadStatus)
  const [app] = useLoad(loadApp)
  return (
    <div class="screen" data-screen="about">
      <ScreenHeader title="About" subtitle="What runs, and where it keeps its files." />
      {status.state === "loading" ? <Loading label="Asking Core…" /> : null}
      {status.state === "failed" ? <ErrorNote error={status.error} onRetry={() => void reload()} /> : null}
      {status.state === "ready" ? (
        <section class="panel">
          <dl class="facts wide">
            <dt>Desktop app</dt>
            <dd class="mono">
              {app.state === "ready" ? `${app.value.appVersion} (${app.value.transport}, ${app.value.platform})` : "—"}
            </dd>
            <dt>Core</dt>
            <dd class="mono">
              {status.value.coreVersion} · protocol {status.value.protocolVersion}
            </dd>
            <dt>Core process</dt>
            <dd class="mono">
              pid {status.value.pid} · up {uptime(status.value.now - status.value.startedAt)}
            </dd>
            <dt>Live sessions</dt>
            <dd>{status.value.liveSessions}</dd>
            <dt>PEDELEC_HOME</dt>
            <dd class="mono">{status.value.home}</dd>
            <dt>Socket</dt>
            <dd class="mono">{status.value.socketPath}</dd>
            <dt>Logs</dt>
            <dd class="mono">{status.value.logsDir}</dd>
          </dl>
        </section>
      ) : null}
    </div>
  )
}
