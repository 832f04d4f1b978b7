/**
 * Registry — the exact `reg.exe` argv that registers, finds and removes `com.pedelec.host` for one browser on
 * Windows: the HKCU key whose default value (`/ve`) is the manifest's full path. Pure; running reg.exe is the
 * injected runner's job (Install), so these calls are asserted in tests on any OS.
 */
import { type Browser, registryKey } from "./Browsers.ts"

export const REG_EXE = "reg.exe"

export interface RegCommands {
  readonly key: string
  /** Create the key (and parents) and set its default value; `/f` overwrites without prompting. */
  readonly add: ReadonlyArray<string>
  /** Exit 0 when the key's default value exists; used so uninstall only deletes what is there. */
  readonly query: ReadonlyArray<string>
  /** Delete the key and its values; `/f` skips the confirmation prompt. */
  readonly delete: ReadonlyArray<string>
}

export interface RegInput {
  readonly browser: Browser
  readonly manifestFile: string
}

export const regCommands = ({ browser, manifestFile }: RegInput): RegCommands => {
  const key = registryKey(browser)
  return {
    key,
    add: ["add", key, "/ve", "/t", "REG_SZ", "/d", manifestFile, "/f"],
    query: ["query", key, "/ve"],
    delete: ["delete", key, "/f"]
  }
}
