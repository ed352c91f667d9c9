// Lint rules. The DOM-injection ban is the point: model and page text must
// never reach an HTML parser, so innerHTML & co. are errors everywhere.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const htmlSinks = [
  { property: "innerHTML", message: "Build DOM with createElement/textContent (no HTML parsing)." },
  { property: "outerHTML", message: "Build DOM with createElement/textContent (no HTML parsing)." },
  { property: "insertAdjacentHTML", message: "Build DOM with createElement/textContent (no HTML parsing)." },
  { object: "document", property: "write", message: "document.write parses HTML." },
  { object: "document", property: "writeln", message: "document.writeln parses HTML." },
];

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "src/generated/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.js", "**/*.mjs"],
    rules: {
      "no-restricted-properties": ["error", ...htmlSinks],
      "no-restricted-syntax": [
        "error",
        { selector: "MemberExpression[property.name=/^(innerHTML|outerHTML|insertAdjacentHTML)$/]", message: "No HTML sinks." },
        { selector: "MemberExpression[property.value=/^(innerHTML|outerHTML|insertAdjacentHTML)$/]", message: "No HTML sinks." },
        { selector: "CallExpression[callee.property.name=/^(write|writeln)$/][callee.object.name='document']", message: "No document.write." },
        { selector: "CallExpression[callee.name='eval']", message: "No eval (MV3 CSP)." },
        { selector: "NewExpression[callee.name='Function']", message: "No new Function (MV3 CSP)." },
        { selector: "CallExpression[callee.property.name='createContextualFragment']", message: "No HTML parsing." },
        { selector: "NewExpression[callee.name='DOMParser']", message: "No HTML parsing." },
        { selector: "MemberExpression[property.name='srcdoc']", message: "No HTML sinks." },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["build.mjs", "eslint.config.js", "../tests/e2e/**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
);
