/**
 * HostManifest — the JSON a browser reads to find `com.pedelec.host`: name, description, the launcher's absolute
 * path, `stdio`, and one `chrome-extension://<id>/` origin per allowed extension (the trailing slash is required).
 * Pure; it validates the ids and the path and nothing else. Where the file goes is Browsers' job.
 */
import { HOST_NAME, isExtensionId } from "./Browsers.ts"
import { invalidInput, type RegistrationError } from "./RegistrationError.ts"

export interface HostManifest {
  readonly name: typeof HOST_NAME
  readonly description: string
  readonly path: string
  readonly type: "stdio"
  readonly allowed_origins: ReadonlyArray<string>
}

export interface HostManifestInput {
  readonly launcherPath: string
  readonly extensionIds: ReadonlyArray<string>
}

export const DESCRIPTION = "Pedelec native host: connects the Pedelec extension to the local Pedelec Core"

/** Undefined when the ids are usable, else the error naming the first bad one (none at all is bad too). */
export const checkExtensionIds = (ids: ReadonlyArray<string>): RegistrationError | undefined => {
  if (ids.length === 0) return invalidInput("At least one extension id is needed")
  const bad = ids.find((id) => !isExtensionId(id))
  return bad === undefined
    ? undefined
    : invalidInput(`${JSON.stringify(bad)} is not a Chrome extension id (32 letters a-p)`, bad)
}

const isAbsolute = (file: string): boolean => file.startsWith("/") || /^[A-Za-z]:[\\/]/.test(file)

/** The manifest for these ids; throws RegistrationError on a bad id or a relative launcher path. */
export const hostManifest = ({ launcherPath, extensionIds }: HostManifestInput): HostManifest => {
  const error = checkExtensionIds(extensionIds)
  if (error !== undefined) throw error
  // Chrome rejects a relative path on Linux and macOS ("Specified native messaging host not found").
  if (!isAbsolute(launcherPath)) throw invalidInput("The launcher path must be absolute", launcherPath)
  return {
    name: HOST_NAME,
    description: DESCRIPTION,
    path: launcherPath,
    type: "stdio",
    allowed_origins: [...new Set(extensionIds)].map((id) => `chrome-extension://${id}/`)
  }
}

/** The file's text: pretty JSON with a final newline. */
export const manifestText = (manifest: HostManifest): string => `${JSON.stringify(manifest, null, 2)}\n`
