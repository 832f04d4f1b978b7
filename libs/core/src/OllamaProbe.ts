/**
 * OllamaProbe — the user's connection check of an Ollama server (desktop role): `GET /api/version` and
 * `GET /api/tags` with the settings' base URL and key, or the overrides the user is trying out, and each failure as
 * the `OLLAMA_*` code pedelec-agent would meet on a turn (apps/cli/src/pedelec-agent/Ollama.ts maps the same
 * statuses). It never stores anything, and the key goes only into the request's Authorization header. Talking to
 * Ollama during a session is pedelec-agent's, not Core's.
 */
import type { OllamaModel, OllamaStatus } from "@pedelec/contracts/Desktop"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { SettingsStore } from "./SettingsStore.ts"

/** A check is a glance: a server that has not answered within this is as good as unreachable for the user. */
const CHECK_TIMEOUT = Duration.seconds(5)

export interface ProbeTarget {
  readonly baseUrl?: string
  readonly apiKey?: string
}

const VersionBody = Schema.Struct({ version: Schema.String })
const TagsBody = Schema.Struct({
  models: Schema.Array(
    Schema.Struct({
      name: Schema.String,
      size: Schema.optionalKey(Schema.Number),
      modified_at: Schema.optionalKey(Schema.String)
    })
  )
})

const unavailable = (baseUrl: string, reason: string) =>
  PedelecError.fromCode("OLLAMA_UNAVAILABLE", "core", { details: { baseUrl, reason } })

const invalid = (baseUrl: string, reason: string) =>
  PedelecError.fromCode("OLLAMA_RESPONSE_INVALID", "core", { details: { baseUrl, reason } })

/** The statuses an Ollama-compatible server answers a client it will not serve with. */
const refused = (baseUrl: string, route: string, status: number) => {
  if (status === 401 || status === 403)
    return PedelecError.fromCode("OLLAMA_AUTH_FAILED", "core", { details: { status } })
  if (status === 429) return PedelecError.fromCode("OLLAMA_RATE_LIMITED", "core", { details: { status } })
  return invalid(baseUrl, `${route} answered HTTP ${status}`)
}

/** One GET, its body decoded by `schema`; every way it can fail is a coded error naming the server. */
const getJson = <S extends Schema.Decoder<unknown>>(
  client: HttpClient.HttpClient,
  target: { readonly baseUrl: string; readonly apiKey: string | undefined },
  route: string,
  schema: S
) =>
  Effect.gen(function* () {
    const url = `${target.baseUrl.replace(/\/+$/, "")}${route}`
    const request = HttpClientRequest.get(url).pipe(
      target.apiKey === undefined ? (same) => same : HttpClientRequest.bearerToken(target.apiKey)
    )
    const response = yield* client.execute(request).pipe(
      Effect.timeoutOrElse({
        duration: CHECK_TIMEOUT,
        orElse: () => Effect.fail(unavailable(target.baseUrl, `no answer within ${Duration.format(CHECK_TIMEOUT)}`))
      }),
      Effect.mapError((error) => (error instanceof PedelecError ? error : unavailable(target.baseUrl, error.message)))
    )
    if (response.status < 200 || response.status >= 300) {
      return yield* Effect.fail(refused(target.baseUrl, route, response.status))
    }
    const body = yield* response.json.pipe(Effect.mapError(() => invalid(target.baseUrl, `${route} is not JSON`)))
    return yield* Schema.decodeUnknownEffect(schema)(body).pipe(
      Effect.mapError(() => invalid(target.baseUrl, `${route} is not Ollama's answer`))
    )
  })

const toModel = (model: (typeof TagsBody.Type)["models"][number]): OllamaModel => ({
  name: model.name,
  ...(model.size === undefined || !Number.isInteger(model.size) || model.size < 0 ? {} : { sizeBytes: model.size }),
  ...(model.modified_at === undefined ? {} : { modifiedAt: model.modified_at.slice(0, 64) })
})

const check = Effect.fn("OllamaProbe.check")(function* (
  client: HttpClient.HttpClient,
  settings: SettingsStore["Service"],
  overrides: ProbeTarget
) {
  const { ollama } = yield* settings.get
  const apiKey = overrides.apiKey ?? (yield* settings.getSecrets).ollamaApiKey
  const target = { baseUrl: overrides.baseUrl ?? ollama.baseUrl, apiKey }
  // Tags first: it is the call that needs the key, so a refused key is reported as such, not as a missing version.
  const tags = yield* getJson(client, target, "/api/tags", TagsBody)
  const version = yield* getJson(client, target, "/api/version", VersionBody).pipe(
    Effect.map((body): string | null => body.version.slice(0, 128)),
    Effect.orElseSucceed(() => null)
  )
  return {
    baseUrl: target.baseUrl,
    version,
    models: tags.models.filter((model) => /^[^\s\p{Cc}]{1,200}$/u.test(model.name)).map(toModel)
  } satisfies OllamaStatus
})

export class OllamaProbe extends Context.Service<
  OllamaProbe,
  { readonly check: (overrides: ProbeTarget) => Effect.Effect<OllamaStatus, PedelecError> }
>()("pedelec/core/OllamaProbe") {
  static readonly layer = Layer.effect(
    OllamaProbe,
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      const settings = yield* SettingsStore
      return OllamaProbe.of({ check: (overrides) => check(client, settings, overrides) })
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))
}
