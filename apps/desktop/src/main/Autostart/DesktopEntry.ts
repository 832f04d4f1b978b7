/**
 * DesktopEntry — the text of the XDG autostart entry that starts Pedelec at login on Linux (`pedelec.desktop`, a
 * Desktop Entry per freedesktop.org's spec 1.5), and whether a file's text is the entry for a given command. Pure:
 * where the file lives and writing it is Autostart's. The Exec line quotes each argument per the spec's rules (a
 * reserved character puts it in double quotes with `"`, `` ` ``, `$` and `\` escaped; `%` doubled), and the value is
 * then escaped as every string value is (`\\`, `\n`, `\t`, `\r`), the order the spec applies them when reading.
 */

export interface EntryFacts {
  /** The program and the arguments it needs before Pedelec's own (`electron <app dir>` in development). */
  readonly command: ReadonlyArray<string>
  /** An absolute path to an image, if the app has one. */
  readonly icon: string | undefined
}

/** The spec's reserved characters: an argument holding any of them, or none at all, is quoted. */
const RESERVED = /[\s"'\\><~|&;$*?#()`]/

export const quoteArgument = (argument: string): string => {
  const literal = argument.replaceAll("%", "%%")
  if (literal.length > 0 && !RESERVED.test(literal)) return literal
  return `"${literal.replace(/["`$\\]/g, (c) => `\\${c}`)}"`
}

/** A string value as written in the file: the key file's own escapes, applied after quoting. */
const escapeValue = (value: string): string =>
  value.replace(/[\\\n\t\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\n" ? "\\n" : c === "\t" ? "\\t" : "\\r"))

/** The Exec value as it appears in the file, for `command` followed by `args`. */
export const execValue = (command: ReadonlyArray<string>, args: ReadonlyArray<string>): string =>
  escapeValue([...command, ...args].map(quoteArgument).join(" "))

export const entryText = (facts: EntryFacts, args: ReadonlyArray<string>): string =>
  [
    "[Desktop Entry]",
    "Type=Application",
    "Version=1.5",
    "Name=Pedelec",
    "Comment=Lets web pages work with your local AI coding agent",
    `Exec=${execValue(facts.command, args)}`,
    ...(facts.icon === undefined ? [] : [`Icon=${escapeValue(facts.icon)}`]),
    "Terminal=false",
    "X-GNOME-Autostart-enabled=true",
    ""
  ].join("\n")

/** The keys of the `[Desktop Entry]` group, as written (still escaped); comments and other groups are skipped. */
export const entryKeys = (text: string): ReadonlyMap<string, string> => {
  const keys = new Map<string, string>()
  let group: string | undefined
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line === "" || line.startsWith("#")) continue
    if (line.startsWith("[")) {
      group = line
      continue
    }
    const equals = line.indexOf("=")
    if (group !== "[Desktop Entry]" || equals < 0) continue
    const key = line.slice(0, equals).trim()
    if (!keys.has(key)) keys.set(key, line.slice(equals + 1).trim())
  }
  return keys
}

/** Whether `text` starts this command at login: its Exec is ours exactly, and no key turns the entry off. */
export const startsCommand = (text: string, facts: EntryFacts, args: ReadonlyArray<string>): boolean => {
  const keys = entryKeys(text)
  return (
    keys.get("Exec") === execValue(facts.command, args) &&
    keys.get("Hidden") !== "true" &&
    keys.get("X-GNOME-Autostart-enabled") !== "false"
  )
}
