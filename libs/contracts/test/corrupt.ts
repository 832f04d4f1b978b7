/**
 * Corruptions of a valid encoded value that its schema must reject, read off the schema's encoded AST: a value of
 * the wrong JSON kind (a string where an integer is), a string outside a set of literals, a missing required key,
 * an unknown key, each applied at every depth of the value. The oracle only judges keys and JSON kinds and
 * over-approximates what a node accepts (anything it does not understand accepts every kind), so a corruption it
 * emits is invalid for certain: it matches no member of any union on its path.
 */
import * as SchemaAST from "effect/SchemaAST"

type Kind = "string" | "number" | "boolean" | "null" | "array" | "object" | "undefined" | "other"

const EVERY: ReadonlyArray<Kind> = ["string", "number", "boolean", "null", "array", "object", "undefined", "other"]
const NON_NULLISH: ReadonlyArray<Kind> = ["string", "number", "boolean", "array", "object", "other"]

const kindOf = (value: unknown): Kind => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  const type = typeof value
  return type === "string" || type === "number" || type === "boolean" || type === "object" || type === "undefined"
    ? type
    : "other"
}

/** The JSON kinds a node may accept. */
const kindsOf = (ast: SchemaAST.AST): ReadonlySet<Kind> => {
  switch (ast._tag) {
    case "String":
    case "TemplateLiteral":
      return new Set(["string"])
    case "Number":
      return new Set(["number"])
    case "Boolean":
      return new Set(["boolean"])
    case "Null":
      return new Set(["null"])
    case "Undefined":
      return new Set(["undefined"])
    case "Literal":
      return new Set([kindOf(ast.literal)])
    case "Arrays":
      return new Set(["array"])
    case "Objects":
      // `Schema.Struct({})` accepts any non-nullish value, even with onExcessProperty "error".
      return ast.propertySignatures.length + ast.indexSignatures.length === 0
        ? new Set(NON_NULLISH)
        : new Set(["object"])
    case "Union":
      return new Set(ast.types.flatMap((member) => [...kindsOf(member)]))
    case "Suspend":
      return kindsOf(ast.thunk())
    default:
      return new Set(EVERY)
  }
}

const literalsOf = (ast: SchemaAST.AST): ReadonlyArray<unknown> | undefined => {
  if (ast._tag === "Literal") return [ast.literal]
  if (ast._tag !== "Union") return undefined
  const all = ast.types.map(literalsOf)
  return all.every((literals) => literals !== undefined) ? all.flat() : undefined
}

/** The alternatives of a node: the members of a union (flattened), or the node itself. */
const membersOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> =>
  ast._tag === "Union" ? ast.types.flatMap(membersOf) : ast._tag === "Suspend" ? membersOf(ast.thunk()) : [ast]

const isRecord = (value: unknown): value is Record<string, unknown> => kindOf(value) === "object"

/** Whether `value` might satisfy `member`, judged by its kind, its keys and its fields' kinds and literals. */
const mayMatch = (member: SchemaAST.AST, value: unknown): boolean => {
  if (!kindsOf(member).has(kindOf(value))) return false
  const literals = literalsOf(member)
  if (literals !== undefined) return literals.includes(value)
  if (member._tag !== "Objects" || !isRecord(value) || member.indexSignatures.length > 0) return true
  if (member.propertySignatures.length === 0) return true
  const declared = new Set<PropertyKey>(member.propertySignatures.map((property) => property.name))
  return (
    Object.keys(value).every((key) => declared.has(key)) &&
    member.propertySignatures.every(({ name, type }) =>
      Object.hasOwn(value, name) ? mayMatchShallow(type, value[name as string]) : SchemaAST.isOptional(type)
    )
  )
}

const mayMatchShallow = (ast: SchemaAST.AST, value: unknown): boolean => {
  if (!kindsOf(ast).has(kindOf(value))) return false
  const literals = literalsOf(ast)
  return literals === undefined || literals.includes(value)
}

const WRONG_VALUES: ReadonlyArray<unknown> = [12345, "wrong", true, null, [1], { wrong: 1 }]

/** A value of a kind `ast` cannot accept, preferring a numeric string where a number is. */
const wrongKind = (ast: SchemaAST.AST, value: unknown): unknown => {
  const kinds = kindsOf(ast)
  if (typeof value === "number" && !kinds.has("string")) return String(value)
  return WRONG_VALUES.find((wrong) => !kinds.has(kindOf(wrong)))
}

const article = (kind: Kind) => `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`

export interface Corruption {
  /** JSON pointer of the corrupted location in the value. */
  readonly at: string
  readonly what: string
  readonly value: unknown
}

const UNKNOWN_KEY = "pedelecUnknownKey"
const MAX_PER_VALUE = 400

const withKey = (record: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> =>
  Object.fromEntries([...Object.entries(record).filter(([name]) => name !== key), [key, value]])

const withoutKey = (record: Record<string, unknown>, key: string): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([name]) => name !== key))

const pointer = (at: string, key: string | number) => `${at}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`

/** Corruptions of `value` (valid for `ast`, encoded side) that `ast` must reject. */
const corruptAt = (ast: SchemaAST.AST, value: unknown, at: string): Array<Corruption> => {
  const members = membersOf(ast)
  const rejected = (candidate: unknown) => members.every((member) => !mayMatch(member, candidate))
  const out: Array<Corruption> = []
  const wrong = wrongKind(ast, value)
  if (wrong !== undefined)
    out.push({ at, what: `${article(kindOf(wrong))} instead of ${article(kindOf(value))}`, value: wrong })
  if (typeof value === "string" && literalsOf(ast) !== undefined && rejected("NOT_A_MEMBER")) {
    out.push({ at, what: "a string outside the literals", value: "NOT_A_MEMBER" })
  }
  const matching = members.filter((member) => mayMatch(member, value))
  const [member] = matching
  if (matching.length !== 1 || member === undefined) return out
  // A corrupted child is invalid for `member`; the parent is then invalid if no other member may match it.
  const others = members.filter((other) => other !== member)
  const nested = (candidate: unknown) => others.every((other) => !mayMatch(other, candidate))

  if (member._tag === "Objects" && isRecord(value)) {
    for (const { name, type } of member.propertySignatures) {
      if (typeof name !== "string" || !Object.hasOwn(value, name)) continue
      const without = withoutKey(value, name)
      if (!SchemaAST.isOptional(type) && rejected(without)) {
        out.push({ at: pointer(at, name), what: "a required key deleted", value: without })
      }
      for (const inner of corruptAt(type, value[name], pointer(at, name))) {
        const candidate = withKey(value, name, inner.value)
        if (nested(candidate)) out.push({ ...inner, value: candidate })
      }
    }
    const [index] = member.indexSignatures
    if (member.indexSignatures.length === 1 && index !== undefined) {
      const declared = new Set<PropertyKey>(member.propertySignatures.map((property) => property.name))
      for (const key of Object.keys(value).filter((key) => !declared.has(key))) {
        for (const inner of corruptAt(index.type, value[key], pointer(at, key))) {
          const candidate = withKey(value, key, inner.value)
          if (nested(candidate)) out.push({ ...inner, value: candidate })
        }
      }
    }
    const extended = withKey(value, UNKNOWN_KEY, 1)
    if (rejected(extended)) out.push({ at: pointer(at, UNKNOWN_KEY), what: "an unknown key added", value: extended })
  }

  if (member._tag === "Arrays" && Array.isArray(value) && member.elements.length === 0) {
    const [item] = member.rest
    if (item !== undefined) {
      value.slice(0, 3).forEach((element: unknown, index) => {
        for (const inner of corruptAt(item, element, pointer(at, index))) {
          const candidate = value.map((other: unknown, position) => (position === index ? inner.value : other))
          if (nested(candidate)) out.push({ ...inner, value: candidate })
        }
      })
    }
  }
  return out.slice(0, MAX_PER_VALUE)
}

export const corruptionsOf = (ast: SchemaAST.AST, encoded: unknown): ReadonlyArray<Corruption> =>
  corruptAt(SchemaAST.toEncoded(ast), encoded, "")
