/**
 * CorePaths — the home layout (HomeLayout) as a service, so Core's services get their paths from the environment
 * they run in: this process's `PEDELEC_HOME`, or one explicit home for tests and `pedelec-core --home`.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { type CorePathsShape, currentEnvironment, resolveCorePaths } from "./HomeLayout.ts"

export { type CorePathsShape, currentEnvironment, type PathEnvironment, resolveCorePaths } from "./HomeLayout.ts"

export class CorePaths extends Context.Service<CorePaths, CorePathsShape>()("pedelec/core/CorePaths") {
  /** From this process's environment: `PEDELEC_HOME`, or `~/.pedelec`. */
  static readonly layer = Layer.sync(CorePaths, () => resolveCorePaths())

  /** For one explicit home (tests, the headless Core's `--home`). */
  static readonly layerFor = (home: string) =>
    Layer.sync(CorePaths, () =>
      resolveCorePaths({ ...currentEnvironment(), env: { ...process.env, PEDELEC_HOME: home } })
    )
}
