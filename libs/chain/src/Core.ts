/**
 * Core — the built headless Core for one Pedelec home of the chain, started with test-kit's CoreProcess: the
 * scripted provider enabled and made the default on request (written to settings.json before start, which Core
 * reads on every call), pedelec-cli on the agents' PATH, stderr kept for failure reports. Stopping it also stops a
 * Core the native host may have started for the same home (by its announced pid), so no daemon outlives a run.
 */
import { mkdir, writeFile } from "node:fs/promises"
import { DEFAULT_SETTINGS, type Settings } from "@pedelec/contracts/Settings"
import { pathsForHome } from "@pedelec/core-client/HomeLayout"
import { liveCore as liveCoreInfo, startCoreProcess, stopLiveCore } from "@pedelec/test-kit/core/CoreProcess"
import { LAYOUT } from "./Layout.ts"

export interface CoreOptions {
  readonly home: string
  /** Written into settings.json before Core starts; leaves an existing settings.json alone when undefined. */
  readonly defaultProvider?: Settings["defaultProvider"]
  /** `PEDELEC_ENABLE_SCRIPTED=1`: the scripted test agent exists (tests and the self-test only). */
  readonly enableScripted?: boolean
  readonly env?: Readonly<Record<string, string>>
}

export interface RunningCore {
  readonly home: string
  readonly pid: number
  readonly stderr: () => string
  readonly stop: () => Promise<void>
}

/** The pid of a live Core serving `home`, if any (started by someone else: the desktop app, a native host). */
export const liveCore = async (home: string): Promise<number | undefined> => (await liveCoreInfo(home))?.pid

const writeDefaultProvider = async (home: string, provider: Settings["defaultProvider"]) => {
  await mkdir(home, { recursive: true, mode: 0o700 })
  const settings: Settings = { ...DEFAULT_SETTINGS, defaultProvider: provider }
  await writeFile(pathsForHome(home).settingsFile, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o644 })
}

export const startCore = async (options: CoreOptions): Promise<RunningCore> => {
  if (options.defaultProvider !== undefined) await writeDefaultProvider(options.home, options.defaultProvider)
  const scripted = options.enableScripted
    ? { PEDELEC_ENABLE_SCRIPTED: "1", PEDELEC_SCRIPTED_AGENT: LAYOUT.scriptedAgent }
    : {}
  const core = await startCoreProcess({
    home: options.home,
    env: { PEDELEC_HOME: options.home, ...scripted, ...options.env }
  })
  const stop = async () => {
    await core.stop()
    // A Core the native host started on its own (ours had died) is detached: only its pid reaches it.
    await stopLiveCore(options.home)
  }
  return { home: options.home, pid: core.info.pid, stderr: core.stderr, stop }
}
