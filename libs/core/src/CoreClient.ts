/**
 * CoreClient — TEMPORARY, for tools/bench/run.ts and tools/bench/deno.ts only, until they import
 * `@pedelec/core-client/CoreClient` and `@pedelec/core-client/RuntimeFile` themselves; then delete this file. It keeps
 * their old calls working: `readRuntimeInfo(file)` and `connectHost(info)`. Nothing else may import it.
 */
import { NodeFileSystem } from "@effect/platform-node"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import * as CoreClient from "@pedelec/core-client/CoreClient"
import * as RuntimeFile from "@pedelec/core-client/RuntimeFile"
import * as Effect from "effect/Effect"
import { CORE_VERSION } from "./CoreConfig.ts"

export const readRuntimeInfo = (runtimeFile: string) =>
  RuntimeFile.readRuntimeInfo(runtimeFile).pipe(Effect.provide(NodeFileSystem.layer))

export const connectHost = (info: CoreRuntimeInfo) =>
  CoreClient.connectHost(info, { component: "native-host", version: CORE_VERSION })
