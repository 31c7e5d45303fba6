// Typesets formulas with the project's KaTeX (node_modules), for sitebuild/typeset_math.py.
// Reads a JSON list of [tex, displayMode] on stdin; writes a JSON list, in the same
// order, of {"html": ...} or {"error": ...}. Run as: node typeset_katex.js PATH_TO_KATEX
// A formula that asks for a command KaTeX trusts only on request (\href, \url, \htmlData,
// \includegraphics and the other \html commands) is an error: a page's math draws, it never
// links, loads or carries HTML attributes.
"use strict";
const katex = require(process.argv[2]);

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const results = JSON.parse(input).map(([tex, displayMode]) => {
    const refused = [];
    const trust = (context) => { refused.push(context.command); return false; };
    try {
      const html = katex.renderToString(tex, {displayMode, throwOnError: true, trust});
      if (refused.length) {
        return {error: `${refused[0]} is not allowed in the site's math (no links, images ` +
                       "or HTML inside a formula)"};
      }
      return {html};
    } catch (err) {
      return {error: err.message};
    }
  });
  process.stdout.write(JSON.stringify(results));
});
