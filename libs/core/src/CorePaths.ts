/**
 * CorePaths — the home layout (core-client's HomeLayout) as a service, so Core's services get their paths from the
 * environment they run in: this process's `PEDELEC_HOME`, or one explicit home for tests and `pedelec-core --home`.
 * The path arithmetic itself is core-client's, shared with every client that looks for this Core.
 */
import { type CorePathsShape, pathsForHome, resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

export class CorePaths extends Context.Service<CorePaths, CorePathsShape>()("pedelec/core/CorePaths") {
  /** From this process's environment: `PEDELEC_HOME`, or `~/.pedelec`. */
  static readonly layer = Layer.sync(CorePaths, () => resolveCorePaths())

  /** For one explicit home (tests, the headless Core's `--home`). */
  static readonly layerFor = (home: string) => Layer.sync(CorePaths, () => pathsForHome(home))
}
