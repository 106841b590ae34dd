// The environment variables a source file reads, found in its syntax tree as a reader would find
// them: `process.env.NAME`, `process.env["NAME"]`, `const { NAME } = process.env`, `env.NAME`
// through an alias (`const env = process.env`) or a parameter named `env`, and the keys of a zod
// schema of the environment (an object whose UPPER_SNAKE keys hold zod schemas, as in
// src/server/config.ts). A name computed at run time (`process.env[name]`) cannot be counted: it
// is reported, so that the code spells its names out.
import ts from "typescript";

const VARIABLE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;

export interface EnvNames {
  names: Set<string>;
  /** `file:line` of each read whose name is computed. */
  computed: string[];
}

const isProcessEnv = (node: ts.Node): boolean =>
  ts.isPropertyAccessExpression(node) &&
  node.name.text === "env" &&
  ts.isIdentifier(node.expression) &&
  node.expression.text === "process";

/** Parentheses, `as` and `!` around an expression, taken off. */
function bare(node: ts.Expression): ts.Expression {
  while (
    ts.isParenthesizedExpression(node) ||
    ts.isAsExpression(node) ||
    ts.isNonNullExpression(node) ||
    ts.isSatisfiesExpression(node)
  )
    node = node.expression;
  return node;
}

/** The leftmost identifier of a chain such as `z.coerce.number().int()` or `flag.default("0")`. */
function root(node: ts.Expression): ts.Identifier | undefined {
  node = bare(node);
  if (ts.isIdentifier(node)) return node;
  if (ts.isCallExpression(node)) return root(node.expression);
  if (ts.isPropertyAccessExpression(node)) return root(node.expression);
  return undefined;
}

function keyName(name: ts.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined;
}

export function envNamesIn(file: string, text: string): EnvNames {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const names = new Set<string>();
  const computed: string[] = [];
  // Identifiers that hold the environment (`const env = process.env`, a parameter `env`), and the
  // file's constants, to tell a zod schema (`const flag = z.enum(…)`) from other values.
  const envAliases = new Set<string>();
  const constants = new Map<string, ts.Expression>();
  const collect = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && node.initializer && ts.isIdentifier(node.name)) {
      constants.set(node.name.text, node.initializer);
      if (isProcessEnv(bare(node.initializer))) envAliases.add(node.name.text);
    }
    if (ts.isParameter(node) && ts.isIdentifier(node.name) && node.name.text === "env")
      envAliases.add("env");
    ts.forEachChild(node, collect);
  };
  collect(source);

  const isEnv = (node: ts.Expression) => {
    const expression = bare(node);
    return (
      isProcessEnv(expression) || (ts.isIdentifier(expression) && envAliases.has(expression.text))
    );
  };
  const seen = new Set<string>();
  const isZod = (node: ts.Expression): boolean => {
    const id = root(node);
    if (!id) return false;
    if (id.text === "z") return true;
    const value = constants.get(id.text);
    if (!value || seen.has(id.text)) return false;
    seen.add(id.text);
    try {
      return isZod(ts.isArrowFunction(value) && !ts.isBlock(value.body) ? value.body : value);
    } finally {
      seen.delete(id.text);
    }
  };
  const line = (node: ts.Node) =>
    `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;

  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node) && isEnv(node.expression)) {
      if (VARIABLE.test(node.name.text)) names.add(node.name.text);
    } else if (ts.isElementAccessExpression(node) && isEnv(node.expression)) {
      const argument = node.argumentExpression;
      if (ts.isStringLiteral(argument) || ts.isNoSubstitutionTemplateLiteral(argument))
        names.add(argument.text);
      else computed.push(line(node));
    } else if (
      ts.isVariableDeclaration(node) &&
      ts.isObjectBindingPattern(node.name) &&
      node.initializer &&
      isEnv(node.initializer)
    ) {
      for (const element of node.name.elements) {
        const key = element.propertyName ?? element.name;
        if (!element.dotDotDotToken && ts.isIdentifier(key)) names.add(key.text);
      }
    } else if (ts.isObjectLiteralExpression(node)) {
      const keyed = node.properties.filter(
        (p): p is ts.PropertyAssignment =>
          ts.isPropertyAssignment(p) && VARIABLE.test(keyName(p.name) ?? ""),
      );
      if (keyed.some((p) => isZod(p.initializer)))
        for (const p of keyed) names.add(keyName(p.name)!);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { names, computed };
}
