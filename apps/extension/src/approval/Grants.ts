/**
 * Grants — what the user has allowed, kept in `chrome.storage.local`: the approved origins, and per origin the
 * explicit workspace paths it may use (SPEC §12: a path is a second grant), the manifest (guidance and tool index)
 * its sessions were last approved with (Manifest), and the site policy the user set (the extension's copy of Core's). Only this worker writes them, so a copy is kept in memory after the
 * first read. It does not ask the user (Approvals does) nor end sessions (Revocation).
 */
import { Origin } from "@pedelec/contracts/Ids"
import { AbsolutePath } from "@pedelec/contracts/Session"
import { DEFAULT_SITE_POLICY, SitePolicy } from "@pedelec/contracts/SitePolicy"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Chrome } from "../browser/Chrome.ts"
import { ApprovedManifest } from "./Manifest.ts"

const STORAGE_KEY = "grants"

/** The stored document: approved origins, each with the workspace paths granted to it and its approved manifest. */
const OriginDocument = Schema.Struct({
  paths: Schema.Array(AbsolutePath),
  manifest: Schema.optionalKey(ApprovedManifest),
  policy: Schema.optionalKey(SitePolicy)
})
const GrantsDocument = Schema.Struct({ origins: Schema.Record(Schema.String, OriginDocument) })
type GrantsDocument = typeof GrantsDocument.Type

interface OriginState {
  readonly paths: Set<string>
  manifest: ApprovedManifest | undefined
  policy: SitePolicy | undefined
}

export interface OriginGrant {
  readonly origin: Origin
  readonly paths: ReadonlyArray<string>
  readonly manifest: ApprovedManifest | undefined
  readonly policy: SitePolicy
}

const fresh = (): OriginState => ({ paths: new Set(), manifest: undefined, policy: undefined })

export class Grants extends Context.Service<
  Grants,
  {
    readonly isApproved: (origin: Origin) => Effect.Effect<boolean>
    readonly hasPath: (origin: Origin, path: string) => Effect.Effect<boolean>
    readonly approve: (origin: Origin) => Effect.Effect<void>
    /** Also approves the origin: a path is only ever granted together with, or after, its origin. */
    readonly grantPath: (origin: Origin, path: string) => Effect.Effect<void>
    /** Removes the origin's approval and every path granted to it. */
    readonly revokeOrigin: (origin: Origin) => Effect.Effect<void>
    readonly revokePath: (origin: Origin, path: string) => Effect.Effect<void>
    /** The manifest the origin's sessions were last approved with; none before its first approved session. */
    readonly manifestOf: (origin: Origin) => Effect.Effect<ApprovedManifest | undefined>
    /** Also approves the origin, as a path does. */
    readonly approveManifest: (origin: Origin, manifest: ApprovedManifest) => Effect.Effect<void>
    /** The site's policy; DEFAULT_SITE_POLICY until the user set one. */
    readonly policyOf: (origin: Origin) => Effect.Effect<SitePolicy>
    /**
     * Only for an approved origin (a policy is part of what the user allowed it). With `seen`, only while the copy
     * is still `seen`: Core's copy as a slower reader (the options listing, which runs on after its page closed)
     * asked for it, so it never undoes a newer one a create took meanwhile.
     */
    readonly setPolicy: (origin: Origin, policy: SitePolicy, seen?: SitePolicy) => Effect.Effect<void>
    readonly list: Effect.Effect<ReadonlyArray<OriginGrant>>
  }
>()("pedelec/extension/Grants") {
  static readonly layer = Layer.effect(
    Grants,
    Effect.gen(function* () {
      const chrome = yield* Chrome
      let cache: Map<string, OriginState> | undefined

      // A stored value that does not decode (hand-edited, an older format) grants nothing: the user approves again.
      const load = Effect.gen(function* () {
        if (cache !== undefined) return cache
        const stored = yield* Effect.promise(() => chrome.local.get(STORAGE_KEY))
        const document = Schema.decodeUnknownOption(GrantsDocument)(stored[STORAGE_KEY]).pipe(
          Option.getOrElse((): GrantsDocument => ({ origins: {} }))
        )
        const loaded = new Map<string, OriginState>()
        for (const [origin, { paths, manifest, policy }] of Object.entries(document.origins)) {
          if (Schema.is(Origin)(origin)) loaded.set(origin, { paths: new Set(paths), manifest, policy })
        }
        // Another fiber may have loaded meanwhile; the first copy wins so no write is lost.
        cache ??= loaded
        return cache
      })

      const save = (grants: Map<string, OriginState>) => {
        const entry = ({ paths, manifest, policy }: OriginState) => ({
          paths: [...paths],
          ...(manifest === undefined ? {} : { manifest }),
          ...(policy === undefined ? {} : { policy })
        })
        const document: GrantsDocument = {
          origins: Object.fromEntries([...grants].map(([origin, state]) => [origin, entry(state)]))
        }
        return Effect.promise(() => chrome.local.set({ [STORAGE_KEY]: document }))
      }

      const update = (change: (grants: Map<string, OriginState>) => void) =>
        Effect.flatMap(load, (grants) => {
          change(grants)
          return save(grants)
        })

      return Grants.of({
        isApproved: (origin) => Effect.map(load, (grants) => grants.has(origin)),
        hasPath: (origin, path) => Effect.map(load, (grants) => grants.get(origin)?.paths.has(path) === true),
        approve: Effect.fn("Grants.approve")((origin: Origin) =>
          update((grants) => {
            if (!grants.has(origin)) grants.set(origin, fresh())
          })
        ),
        grantPath: Effect.fn("Grants.grantPath")((origin: Origin, path: string) =>
          update((grants) => {
            const state = grants.get(origin) ?? fresh()
            state.paths.add(path)
            grants.set(origin, state)
          })
        ),
        revokeOrigin: Effect.fn("Grants.revokeOrigin")((origin: Origin) =>
          update((grants) => {
            grants.delete(origin)
          })
        ),
        revokePath: Effect.fn("Grants.revokePath")((origin: Origin, path: string) =>
          update((grants) => {
            grants.get(origin)?.paths.delete(path)
          })
        ),
        manifestOf: (origin) => Effect.map(load, (grants) => grants.get(origin)?.manifest),
        policyOf: (origin) => Effect.map(load, (grants) => grants.get(origin)?.policy ?? DEFAULT_SITE_POLICY),
        setPolicy: Effect.fn("Grants.setPolicy")(function* (origin: Origin, policy: SitePolicy, seen?: SitePolicy) {
          const grants = yield* load
          const state = grants.get(origin)
          // Refreshed from Core at each create and options listing: stored only when it changed.
          const known = JSON.stringify(state?.policy ?? DEFAULT_SITE_POLICY)
          if (state === undefined || known === JSON.stringify(policy)) return
          if (seen !== undefined && known !== JSON.stringify(seen)) return
          state.policy = policy
          yield* save(grants)
        }),
        approveManifest: Effect.fn("Grants.approveManifest")((origin: Origin, manifest: ApprovedManifest) =>
          update((grants) => {
            const state = grants.get(origin) ?? fresh()
            state.manifest = manifest
            grants.set(origin, state)
          })
        ),
        list: Effect.map(load, (grants) =>
          [...grants]
            .map(([origin, state]) => ({
              origin: origin as Origin,
              paths: [...state.paths].sort(),
              manifest: state.manifest,
              policy: state.policy ?? DEFAULT_SITE_POLICY
            }))
            .sort((a, b) => a.origin.localeCompare(b.origin))
        )
      })
    })
  )
}
