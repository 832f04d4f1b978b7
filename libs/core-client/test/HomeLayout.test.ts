import { assert, describe, it } from "@effect/vitest"
import { type PathEnvironment, resolveCorePaths } from "../src/HomeLayout.ts"

const linux = (env: Record<string, string>, homedir = "/home/ada"): PathEnvironment => ({
  env,
  platform: "linux",
  homedir,
  uid: 1000,
  tmpdir: "/tmp"
})

describe("resolveCorePaths", () => {
  it("defaults to ~/.pedelec with its run, sessions, logs and workspaces folders", () => {
    const paths = resolveCorePaths(linux({}))
    assert.strictEqual(paths.home, "/home/ada/.pedelec")
    assert.strictEqual(paths.socketPath, "/home/ada/.pedelec/run/core.sock")
    assert.strictEqual(paths.runtimeFile, "/home/ada/.pedelec/run/core.json")
    assert.strictEqual(paths.sessionsDir, "/home/ada/.pedelec/sessions")
    assert.strictEqual(paths.logsDir, "/home/ada/.pedelec/logs")
    assert.strictEqual(paths.workspacesDir, "/home/ada/.pedelec/workspaces")
    assert.strictEqual(paths.secretsFile, "/home/ada/.pedelec/secrets.json")
  })

  it("PEDELEC_HOME overrides the home, resolved to an absolute path", () => {
    assert.strictEqual(resolveCorePaths(linux({ PEDELEC_HOME: "/srv/p" })).home, "/srv/p")
    assert.strictEqual(resolveCorePaths(linux({ PEDELEC_HOME: "/srv/p/../q" })).home, "/srv/q")
  })

  it("a home too deep for sun_path gets a short per-user socket directory, stable per home", () => {
    const deep = `/tmp/${"x".repeat(120)}`
    const a = resolveCorePaths(linux({ PEDELEC_HOME: deep }))
    const b = resolveCorePaths(linux({ PEDELEC_HOME: deep }))
    const other = resolveCorePaths(linux({ PEDELEC_HOME: `${deep}2` }))
    assert.match(a.socketPath, /^\/tmp\/pedelec-1000-[0-9a-f]{16}\/core\.sock$/)
    assert.strictEqual(a.socketPath, b.socketPath)
    assert.notStrictEqual(a.socketPath, other.socketPath)
    assert.isAtMost(Buffer.byteLength(a.socketPath), 100)
    assert.strictEqual(a.runtimeFile, `${deep}/run/core.json`)
  })

  it("prefers XDG_RUNTIME_DIR for the short socket directory", () => {
    const paths = resolveCorePaths(
      linux({ PEDELEC_HOME: `/tmp/${"y".repeat(120)}`, XDG_RUNTIME_DIR: "/run/user/1000" })
    )
    assert.match(paths.socketPath, /^\/run\/user\/1000\/pedelec-1000-[0-9a-f]{16}\/core\.sock$/)
  })

  it("uses a per-user named pipe on Windows", () => {
    const paths = resolveCorePaths({
      env: { USERNAME: "ada" },
      platform: "win32",
      homedir: "C:\\Users\\ada",
      uid: 0,
      tmpdir: "C:\\Temp"
    })
    assert.strictEqual(paths.home, "C:\\Users\\ada\\.pedelec")
    assert.match(paths.socketPath, /^\\\\\.\\pipe\\pedelec-ada-[0-9a-f]{16}$/)
    assert.strictEqual(paths.settingsFile, "C:\\Users\\ada\\.pedelec\\settings.json")
  })
})
