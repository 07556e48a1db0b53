#!/bin/sh
# The official MCP Inspector CLI against a running server: tools/list and one tools/call.
#   tests/inspector-cli.sh http://localhost:3000/mcp cms_mcp_…
# (npm test runs the same checks in tests/mcp-inspector.test.ts against a test server.)
set -eu
url=${1:?usage: tests/inspector-cli.sh <mcp url> <MCP token>}
token=${2:?usage: tests/inspector-cli.sh <mcp url> <MCP token>}
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/node_modules/@modelcontextprotocol/inspector-cli/build"
# Run from its build folder: v1.0.3 looks for its package.json relative to the working directory.
cd "$build"
node cli.js --cli "$url" --transport http --header "Authorization: Bearer $token" --method tools/list >/tmp/inspector-tools.json
node -e 'const t = JSON.parse(require("fs").readFileSync("/tmp/inspector-tools.json", "utf8")).tools; if (!t.some((x) => x.name === "get_project")) process.exit(1); console.log("tools/list: " + t.length + " tools");'
node cli.js --cli "$url" --transport http --header "Authorization: Bearer $token" --method tools/call --tool-name get_project
