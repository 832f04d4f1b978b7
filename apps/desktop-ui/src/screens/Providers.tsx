/**
 * Providers — every agent CLI Core can run: found or not, its version, where it was found (the copy sessions start,
 * or Ollama's server), whether it is experimental, whether it has an effort knob, and for a missing one Core's own words on how to install it and sign in (each `command` in them
 * copyable); Rescan; the default provider (stored in settings.json through the desktop role). What a provider is
 * and how it is found is Core's (libs/providers); this screen only shows and asks.
 */

import type { LocalProvider } from "@pedelec/contracts/Desktop"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import type { PublicSettings } from "@pedelec/contracts/Settings"
import { useCallback, useState } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { Badge, CopyButton, Empty, ErrorNote, Loading, ScreenHeader, useLoad } from "../ui/Kit.tsx"

const COMMAND = /`([^`]+)`/g

/**
 * Core writes commands in backticks (`npm install -g …`): the sentence keeps them as inline code, and each one
 * that is a command line (it has arguments) is listed under it with a Copy button.
 */
const Explained = ({ text }: { readonly text: string }) => {
  const commands = [...text.matchAll(COMMAND)].map((match) => match[1] ?? "").filter((command) => command.includes(" "))
  return (
    <div class="explained">
      <p>
        {text.split(COMMAND).map((part, index) =>
          // split() with a capture group puts each backticked command at an odd index.
          index % 2 === 1 ? <code key={index}>{part}</code> : part
        )}
      </p>
      {commands.length === 0 ? null : (
        <ul class="commands">
          {commands.map((command) => (
            <li class="command" key={command}>
              <code>{command}</code>
              <CopyButton text={command} />
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

const ProviderCard = ({ provider, isDefault }: { readonly provider: LocalProvider; readonly isDefault: boolean }) => (
  <li class="card provider" data-provider={provider.code}>
    <div class="card-head">
      <div>
        <h2>{provider.name}</h2>
        <span class="muted mono">{provider.code}</span>
      </div>
      <div class="badges">
        {isDefault ? <Badge tone="info">Default</Badge> : null}
        {provider.experimental ? <Badge tone="warn">Experimental</Badge> : null}
        {provider.available ? <Badge tone="ok">Ready</Badge> : <Badge tone="bad">Not found</Badge>}
      </div>
    </div>
    <dl class="facts">
      <dt>Version</dt>
      <dd class="mono">{provider.version ?? "—"}</dd>
      {provider.location === null ? null : (
        <>
          <dt>{provider.code === "ollama" ? "Server" : "Path"}</dt>
          <dd class="mono with-copy" data-part="location">
            <span title={provider.location}>{provider.location}</span>
            <CopyButton text={provider.location} />
          </dd>
        </>
      )}
      <dt>Effort levels</dt>
      {/* The knob's details are for the Effort screen; without one, why not is what a user needs here. */}
      <dd title={provider.effort.note}>
        {provider.effort.supported ? "Low / medium / high" : "None"}
        {provider.effort.supported || provider.effort.note === undefined ? null : (
          <span class="note">{provider.effort.note}</span>
        )}
      </dd>
    </dl>
    {provider.error === null ? null : <Explained text={provider.error} />}
  </li>
)

const DefaultProvider = (props: {
  readonly providers: ReadonlyArray<LocalProvider>
  readonly settings: PublicSettings
  readonly onSaved: (settings: PublicSettings) => void
}) => {
  const [error, setError] = useState<PedelecErrorWire | undefined>(undefined)
  const choose = async (value: string) => {
    const chosen = props.providers.find((provider) => provider.code === value)?.code ?? null
    const { secretsSet: _, ...settings } = props.settings
    const outcome = await call("desktop.settings.set", { settings: { ...settings, defaultProvider: chosen } })
    setError(outcome.ok ? undefined : outcome.error)
    if (outcome.ok) props.onSaved(outcome.value)
  }
  return (
    <section class="panel inline">
      <label for="default-provider">Default provider</label>
      <select
        id="default-provider"
        value={props.settings.defaultProvider ?? ""}
        onChange={(event) => void choose(event.currentTarget.value)}
      >
        <option value="">None — each page must name one</option>
        {props.providers.map((provider) => (
          <option value={provider.code} key={provider.code}>
            {provider.name}
            {provider.available ? "" : " (not found)"}
          </option>
        ))}
      </select>
      <p class="hint">Used when a page starts a session without naming a provider.</p>
      {error === undefined ? null : <ErrorNote error={error} />}
    </section>
  )
}

export const Providers = () => {
  const [rescanning, setRescanning] = useState(false)
  const loadProviders = useCallback(() => call("desktop.providers.list", { rescan: false }), [])
  const loadSettings = useCallback(() => call("desktop.settings.get", {}), [])
  const [providers, , setProviders] = useLoad(loadProviders)
  const [settings, , setSettings] = useLoad(loadSettings)
  const [rescanError, setRescanError] = useState<PedelecErrorWire | undefined>(undefined)
  const rescan = async () => {
    setRescanning(true)
    const outcome = await call("desktop.providers.list", { rescan: true })
    setRescanning(false)
    setRescanError(outcome.ok ? undefined : outcome.error)
    if (outcome.ok) setProviders(outcome.value)
  }
  return (
    <div class="screen" data-screen="providers">
      <ScreenHeader title="Providers" subtitle="The agent CLIs Pedelec can run on this machine.">
        <button type="button" class="button" onClick={() => void rescan()} disabled={rescanning}>
          {rescanning ? "Rescanning…" : "Rescan"}
        </button>
      </ScreenHeader>
      {rescanError === undefined ? null : <ErrorNote error={rescanError} todo="Rescan again in a moment." />}
      {providers.state === "ready" && settings.state === "ready" ? (
        <DefaultProvider providers={providers.value} settings={settings.value} onSaved={setSettings} />
      ) : null}
      {providers.state === "loading" ? <Loading label="Looking for agent CLIs…" /> : null}
      {providers.state === "failed" ? (
        <ErrorNote error={providers.error} todo="Rescan once the problem is fixed." onRetry={() => void rescan()} />
      ) : null}
      {providers.state === "ready" && providers.value.length === 0 ? (
        <Empty title="No providers">This Core knows no agent CLI. Update Pedelec.</Empty>
      ) : null}
      {providers.state === "ready" ? (
        <ul class="cards">
          {providers.value.map((provider) => (
            <ProviderCard
              provider={provider}
              key={provider.code}
              isDefault={settings.state === "ready" && settings.value.defaultProvider === provider.code}
            />
          ))}
        </ul>
      ) : null}
    </div>
  )
}
