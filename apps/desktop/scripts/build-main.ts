// Builds Electron's side of the desktop app into dist/: main (src/main/main.ts → main.mjs, ESM, every workspace
// import bundled so the app resolves nothing at run time), the preload (src/preload/preload.ts → preload.cjs:
// a sandboxed preload must be one CommonJS file), both with `electron` external (Electron provides it), and the
// tray icons, drawn here as PNGs (idle grey, running green, a problem red) so no binary is committed.
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { crc32, deflateSync } from "node:zlib"
import { type BuildOptions, build } from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")

const common: BuildOptions = {
  bundle: true,
  platform: "node",
  external: ["electron"],
  sourcemap: true,
  logLevel: "warning"
}

await build({
  ...common,
  entryPoints: [path.join(root, "src/main/main.ts")],
  outfile: path.join(dist, "main.mjs"),
  format: "esm",
  target: "node22",
  // Bundled CommonJS dependencies call require(); ESM output has none unless it is made.
  banner: {
    js: "import { createRequire as __pedelecRequire } from 'node:module'; const require = __pedelecRequire(import.meta.url);"
  }
})

await build({
  ...common,
  entryPoints: [path.join(root, "src/preload/preload.ts")],
  outfile: path.join(dist, "preload.cjs"),
  format: "cjs",
  target: "chrome130"
})

/** One PNG chunk: length, type, data, CRC of type and data. */
const chunk = (type: string, data: Buffer) => {
  const head = Buffer.alloc(4)
  head.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "ascii"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([head, body, crc])
}

/** A `size`² RGBA ring with a filled dot of `rgb` inside it, anti-aliased by distance from the centre. */
const icon = (size: number, rgb: readonly [number, number, number]) => {
  const rows: Array<Buffer> = []
  const centre = (size - 1) / 2
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4)
    for (let x = 0; x < size; x++) {
      const distance = Math.hypot(x - centre, y - centre) / (size / 2)
      const ring = Math.max(0, 1 - Math.abs(distance - 0.82) * 10)
      const dot = Math.min(1, Math.max(0, (0.5 - distance) * 10))
      const alpha = Math.min(1, ring + dot)
      const colour = dot > ring ? rgb : ([96, 96, 96] as const)
      row.set([...colour, Math.round(alpha * 255)], 1 + x * 4)
    }
    rows.push(row)
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header.set([8, 6, 0, 0, 0], 8)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0))
  ])
}

const ICONS = { idle: [150, 150, 150], running: [46, 160, 67], problem: [215, 58, 73] } as const

await mkdir(path.join(dist, "icons"), { recursive: true })
for (const [state, rgb] of Object.entries(ICONS)) {
  await writeFile(path.join(dist, "icons", `tray-${state}.png`), icon(22, rgb))
  await writeFile(path.join(dist, "icons", `tray-${state}@2x.png`), icon(44, rgb))
}
