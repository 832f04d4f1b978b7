/**
 * @pedelec/sdk/effect — the SDK for Effect programs: the client as a scoped service (the connection closes with its
 * scope) and every operation as an Effect whose one error type is `PedelecError`, narrowed by `code`
 * (`Effect.catchIf((e) => hasCode(e, "SESSION_BUSY"), …)`). Session callbacks (`onChat`, `onTool`, …) are the
 * session's own.
 */
import type { AssetPath } from "@pedelec/contracts/Assets"
import { hasCode, PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Scope } from "effect/Scope"
import {
  type ApprovalStatus,
  Pedelec,
  type PedelecAvailability,
  type PedelecOptions,
  type ResumeOptions
} from "./Pedelec.ts"
import type { SandboxAsset } from "./session/Assets.ts"
import type { TurnResult } from "./session/EventContext.ts"
import type { PedelecSession, SendTextOptions } from "./session/PedelecSession.ts"
import type { CreateSessionOptions } from "./tools/Manifest.ts"
import type { JsonValue, ToolDefinition, ToolNameOf } from "./tools/Tool.ts"

export { hasCode, PedelecError }

const orInternal = (error: unknown): PedelecError =>
  error instanceof PedelecError
    ? error
    : PedelecError.fromCode("INTERNAL_ERROR", "sdk", {
        details: { reason: error instanceof Error ? error.message : String(error) }
      })

const attempt = <A>(run: () => Promise<A>): Effect.Effect<A, PedelecError> =>
  Effect.tryPromise({ try: run, catch: orInternal })

/** The client as a service: `PedelecClient.layer(options)` provides it and closes the connection with its scope. */
export class PedelecClient extends Context.Service<
  PedelecClient,
  {
    /** As `Pedelec.createSession`: opens the approval window for a new origin. */
    readonly createSession: <const Tools extends ReadonlyArray<ToolDefinition> = []>(
      options?: CreateSessionOptions<Tools>
    ) => Effect.Effect<PedelecSession<ToolNameOf<Tools>>, PedelecError>
    /** As `Pedelec.resumeSession`. */
    readonly resumeSession: (
      sessionId: string,
      options?: ResumeOptions
    ) => Effect.Effect<PedelecSession<string>, PedelecError>
    /** As `Pedelec.listProviders`. */
    readonly listProviders: Effect.Effect<Awaited<ReturnType<Pedelec["listProviders"]>>, PedelecError>
    /** As `Pedelec.getSettings`. */
    readonly getSettings: Effect.Effect<Awaited<ReturnType<Pedelec["getSettings"]>>, PedelecError>
    /** As `Pedelec.getApprovalStatus`: never opens a window. */
    readonly getApprovalStatus: Effect.Effect<ApprovalStatus, PedelecError>
    readonly requestApproval: Effect.Effect<ApprovalStatus, PedelecError>
    /** As `Pedelec.checkAvailability`: never fails; a problem is in its `error`. */
    readonly checkAvailability: Effect.Effect<PedelecAvailability>
  }
>()("@pedelec/sdk/PedelecClient") {
  /** One connection to the extension for the layer's lifetime. */
  static readonly layer = (options?: PedelecOptions) =>
    Layer.effect(
      PedelecClient,
      Effect.gen(function* () {
        const client = yield* Effect.acquireRelease(
          Effect.sync(() => new Pedelec(options)),
          (pedelec) => Effect.sync(() => pedelec.close())
        )
        return {
          createSession: (sessionOptions) => attempt(() => client.createSession(sessionOptions)),
          resumeSession: (sessionId, resumeOptions) => attempt(() => client.resumeSession(sessionId, resumeOptions)),
          listProviders: attempt(() => client.listProviders()),
          getSettings: attempt(() => client.getSettings()),
          getApprovalStatus: attempt(() => client.getApprovalStatus()),
          requestApproval: attempt(() => client.requestApproval()),
          checkAvailability: Effect.promise(() => client.checkAvailability())
        }
      })
    )
}

/** Sends text and waits for the turn's completion; fails with the turn's own error. */
export const sendText = (
  session: PedelecSession<string>,
  text: string,
  options?: SendTextOptions
): Effect.Effect<TurnResult, PedelecError> => attempt(() => session.sendText(text, options))

/** The warm-up turn of `PedelecSession.prepare`. */
export const prepare = (session: PedelecSession<string>): Effect.Effect<void, PedelecError> =>
  attempt(() => session.prepare())

/** Stops the active turn; its `sendText` then succeeds with reason `cancelled`. */
export const cancel = (session: PedelecSession<string>): Effect.Effect<void, PedelecError> =>
  attempt(() => session.cancel())

/** Idempotent. */
export const end = (session: PedelecSession<string>): Effect.Effect<void, PedelecError> => attempt(() => session.end())

/** Puts a file into the session's assets; succeeds with its path. */
export const uploadAsset = (
  session: PedelecSession<string>,
  file: File,
  targetPath?: string
): Effect.Effect<AssetPath, PedelecError> => attempt(() => session.uploadAsset(file, targetPath))

/** The session's asset files. */
export const listAssets = (session: PedelecSession<string>): Effect.Effect<ReadonlyArray<SandboxAsset>, PedelecError> =>
  attempt(() => session.listAssets())

/** Reads an asset as UTF-8 text (`ASSET_DECODE_FAILED` if it is not). */
export const readAssetText = (session: PedelecSession<string>, path: string): Effect.Effect<string, PedelecError> =>
  attempt(() => session.readAsset(path, "text"))

/** Reads an asset as JSON (`ASSET_DECODE_FAILED` if it is not). */
export const readAssetJson = <T = JsonValue>(
  session: PedelecSession<string>,
  path: string
): Effect.Effect<T, PedelecError> => attempt(() => session.readAsset<T>(path, "json"))

/** Reads an asset as a `File`. */
export const readAssetFile = (session: PedelecSession<string>, path: string): Effect.Effect<File, PedelecError> =>
  attempt(() => session.readAsset(path, "file"))

/** A session that ends when the scope closes. */
export const scoped = <Name extends string>(
  acquire: Effect.Effect<PedelecSession<Name>, PedelecError>
): Effect.Effect<PedelecSession<Name>, PedelecError, Scope> =>
  Effect.acquireRelease(acquire, (session) => Effect.ignore(end(session as PedelecSession<string>)))
