/**
 * Assets — the `assets` scenario: a 50 MiB asset uploaded and downloaded through the real Core's asset server with
 * tickets, next to a bare node:http server on loopback in the same run, so the ratio is Pedelec's cost where
 * absolute MB/s (a shared box, its disk) mean little.
 *   Pedelec: a real built Core (temp PEDELEC_HOME) and a scripted session; per run one `asset.upload_ticket` RPC and
 *   a PUT of the body, one `asset.download_ticket` RPC and a GET, timed with and without the ticket RPC.
 *   Bare: a node:http server in a second Node process that streams a PUT body to a temp file and renames it into
 *   place, and streams a GET from that file: the same disk work and process hop, without tickets or checks.
 * Both sides get the same client: node:http on 127.0.0.1, the body sent from one buffer in 1 MiB slices, a download
 * counted and dropped. Runs alternate sides; medians of RUNS runs. It does not test the asset rules (the suites do).
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { rm } from "node:fs/promises"
import { request } from "node:http"
import { ASSET_TICKET_HEADER, type AssetPath } from "@pedelec/contracts/Assets"
import * as Effect from "effect/Effect"
import { type BenchCore, hostClient, ORIGIN, tempDir, withCore } from "./BenchCore.ts"
import { type Results, report } from "./Report.ts"
import { median } from "./Stats.ts"

const MiB = 1024 * 1024
const SIZE = 50 * MiB
const RUNS = 7
const SLICE = MiB

/** One request on loopback: the body from `data` in slices, the answer counted. Resolves with ms and bytes read. */
const transfer = (url: string, method: "PUT" | "GET", headers: Record<string, string>, data?: Buffer) =>
  new Promise<{ ms: number; status: number; bytes: number }>((resolve, reject) => {
    const target = new URL(url)
    const started = performance.now()
    const req = request({ host: target.hostname, port: target.port, path: target.pathname, method, headers })
    req.on("error", reject)
    req.on("response", (res) => {
      let bytes = 0
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length
      })
      res.on("end", () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, bytes }))
      res.on("error", reject)
    })
    if (data === undefined) {
      req.end()
      return
    }
    let offset = 0
    const pump = () => {
      while (offset < data.length) {
        const slice = data.subarray(offset, offset + SLICE)
        offset += slice.length
        if (!req.write(slice)) {
          req.once("drain", pump)
          return
        }
      }
      req.end()
    }
    pump()
  })

const ensure = (what: string, result: { status: number; bytes: number }, status: number, bytes?: number) => {
  if (result.status !== status || (bytes !== undefined && result.bytes !== bytes))
    throw new Error(`${what}: HTTP ${result.status}, ${result.bytes} bytes`)
}

/**
 * The floor, in its own Node process as Core is (in this one it would share the client's event loop, and on a small
 * box that alone changes the numbers): PUT streams to a temp file and renames it, GET streams the file back. No
 * checks, no tickets.
 */
const BARE_SERVER = `
import { randomBytes } from "node:crypto"
import { createReadStream, createWriteStream } from "node:fs"
import { rename, stat } from "node:fs/promises"
import { createServer } from "node:http"
import path from "node:path"
import { pipeline } from "node:stream/promises"
const dir = process.argv[1]
const file = path.join(dir, "bare.bin")
const server = createServer((req, res) => {
  if (req.method === "PUT") {
    const temporary = path.join(dir, randomBytes(8).toString("hex") + ".upload")
    pipeline(req, createWriteStream(temporary, { flags: "wx", mode: 0o600 }))
      .then(() => rename(temporary, file))
      .then(() => { res.writeHead(201, { "content-type": "application/json" }); res.end("{}") })
      .catch(() => res.destroy())
    return
  }
  stat(file).then(
    (info) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(info.size) })
      pipeline(createReadStream(file, { highWaterMark: 256 * 1024 }), res).catch(() => undefined)
    },
    () => { res.writeHead(404); res.end() }
  )
})
server.listen({ host: "127.0.0.1", port: 0 }, () => process.stdout.write(server.address().port + "\\n"))
`

const bareServer = async (dir: string) => {
  const child = spawn(process.execPath, ["--input-type=module", "-e", BARE_SERVER, dir], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding("utf8").once("data", (line: string) => resolve(line.trim()))
    child.once("exit", (code) => reject(new Error(`the bare server exited (${code})`)))
  })
  return {
    url: `http://127.0.0.1:${port}/bare.bin`,
    close: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve())
        child.kill()
      })
  }
}

interface Samples {
  readonly put: Array<number>
  readonly get: Array<number>
  readonly putWithTicket: Array<number>
  readonly getWithTicket: Array<number>
}

const pedelecRuns = (core: BenchCore, data: Buffer, runs: number, samples: Samples) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const input = { provider: "scripted" as const, autoEndOnDisconnect: false }
      const { sessionId } = yield* client["session.create"]({ origin: ORIGIN, input })
      const assetPath = "bench/run.bin" as AssetPath
      const run = Effect.gen(function* () {
        const t0 = performance.now()
        const up = yield* client["asset.upload_ticket"]({
          origin: ORIGIN,
          sessionId,
          path: assetPath,
          bytes: data.length,
          contentType: "application/octet-stream"
        })
        const put = yield* Effect.promise(() =>
          transfer(up.url, "PUT", { origin: ORIGIN, [ASSET_TICKET_HEADER]: up.token }, data)
        )
        ensure("Pedelec PUT", put, 201)
        const t1 = performance.now()
        const down = yield* client["asset.download_ticket"]({ origin: ORIGIN, sessionId, path: assetPath })
        const get = yield* Effect.promise(() =>
          transfer(down.url, "GET", { origin: ORIGIN, [ASSET_TICKET_HEADER]: down.token })
        )
        ensure("Pedelec GET", get, 200, data.length)
        const t2 = performance.now()
        return { put: put.ms, get: get.ms, putWithTicket: t1 - t0, getWithTicket: t2 - t1 }
      })
      for (let index = 0; index < runs; index++) {
        const measured = yield* run
        samples.put.push(measured.put)
        samples.get.push(measured.get)
        samples.putWithTicket.push(measured.putWithTicket)
        samples.getWithTicket.push(measured.getWithTicket)
      }
    })
  )

const bareRun = async (url: string, data: Buffer, samples: Samples) => {
  const put = await transfer(url, "PUT", {}, data)
  ensure("bare PUT", put, 201)
  const get = await transfer(url, "GET", {})
  ensure("bare GET", get, 200, data.length)
  samples.put.push(put.ms)
  samples.get.push(get.ms)
}

const rate = (ms: number) => SIZE / MiB / (ms / 1000)
const cell = (samples: ReadonlyArray<number>) =>
  `${rate(median(samples)).toFixed(0).padStart(6)} MiB/s (${median(samples).toFixed(0)} ms)`

const noSamples = (): Samples => ({ put: [], get: [], putWithTicket: [], getWithTicket: [] })

/** Untimed warm-up of both sides (JIT, page cache, the first session), then RUNS rounds, alternating who goes first. */
const measure = async (core: BenchCore, bareUrl: string, data: Buffer) => {
  const pedelec = noSamples()
  const floor = noSamples()
  await bareRun(bareUrl, data, noSamples())
  await Effect.runPromise(pedelecRuns(core, data, 1, noSamples()))
  for (let round = 0; round < RUNS; round++) {
    const sides = [() => Effect.runPromise(pedelecRuns(core, data, 1, pedelec)), () => bareRun(bareUrl, data, floor)]
    for (const side of round % 2 === 0 ? sides : sides.reverse()) await side()
  }
  return { pedelec, floor }
}

export const assets = async (results: Results): Promise<void> => {
  const dir = await tempDir("pedelec-bench-assets-")
  const data = randomBytes(SIZE)
  const bare = await bareServer(dir)
  let measured: Awaited<ReturnType<typeof measure>>
  try {
    measured = await withCore("pedelec-bench-assets-core-", (core) => measure(core, bare.url, data))
  } finally {
    await bare.close()
    await rm(dir, { recursive: true, force: true })
  }
  const { pedelec, floor } = measured
  const out = report(results, 40)
  out.say(`assets: ${SIZE / MiB} MiB over loopback, median of ${RUNS} runs per side (node ${process.version})`)
  out.columns("", ["upload (PUT)", "download (GET)"], 26)
  out.columns("Pedelec, transfer only", [cell(pedelec.put), cell(pedelec.get)], 26)
  out.columns("Pedelec, ticket RPC + transfer", [cell(pedelec.putWithTicket), cell(pedelec.getWithTicket)], 26)
  out.columns("bare node:http (temp file + rename)", [cell(floor.put), cell(floor.get)], 26)
  const throughput = (name: string, ours: ReadonlyArray<number>, base: ReadonlyArray<number>) => ({
    name,
    value: rate(median(ours)) / rate(median(base))
  })
  out.say("  throughput ratios (Pedelec / bare)")
  out.factors(
    "transfer only",
    [
      throughput("asset_upload_vs_bare", pedelec.put, floor.put),
      throughput("asset_download_vs_bare", pedelec.get, floor.get)
    ],
    26
  )
  out.factors(
    "ticket RPC + transfer",
    [
      throughput("asset_upload_with_ticket_vs_bare", pedelec.putWithTicket, floor.put),
      throughput("asset_download_with_ticket_vs_bare", pedelec.getWithTicket, floor.get)
    ],
    26
  )
}
