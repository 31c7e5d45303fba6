// Typesets formulas with the project's KaTeX (node_modules), for sitebuild/typeset_math.py.
// Reads a JSON list of [tex, displayMode] on stdin; writes a JSON list, in the same
// order, of {"html": ...} or {"error": ...}. Run as: node typeset_katex.js PATH_TO_KATEX
"use strict";
const katex = require(process.argv[2]);

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const results = JSON.parse(input).map(([tex, displayMode]) => {
    try {
      return {html: katex.renderToString(tex, {displayMode, throwOnError: true})};
    } catch (err) {
      return {error: err.message};
    }
  });
  process.stdout.write(JSON.stringify(results));
});
