// Function length: no product function (a project's src/) is longer than MAX_FUNCTION_LINES. Long service
// constructors are where state hides behind closures (issue 11 split the last ones); this keeps them split.
// Tests, scripts and benches are not counted: a long `describe` is a list of cases, not hidden state.

import ts from "typescript"

export const MAX_FUNCTION_LINES = 100

export interface LongFunction {
  /** 1-based line where the function starts. */
  readonly line: number
  readonly lines: number
}

const isFunction = (node: ts.Node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node)

/** Every function of the file longer than the limit, outermost first. */
export const longFunctions = (fileName: string, text: string, limit = MAX_FUNCTION_LINES): Array<LongFunction> => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const found: Array<LongFunction> = []
  const visit = (node: ts.Node) => {
    if (isFunction(node)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
      if (end - start + 1 > limit) found.push({ line: start + 1, lines: end - start + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}
