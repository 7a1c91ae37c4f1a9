// The MCP server of one /mcp request (stateless: a fresh instance each time, built for its caller).
// Every tool is listed whatever the token's scopes, its scope named in its description: a model sees
// what the human could grant, and a call without the scope is the route's INSUFFICIENT_SCOPE as a tool
// error, which says to authorize again asking for it.
import { fromJsonSchema, McpServer } from '@modelcontextprotocol/server'
import { API_DOCUMENT_VERSION } from '../plugins/docs'
import { callTool, type Caller, type DispatchContext } from './dispatch'
import { TOOLS, type Args } from './tools'

/** The JSON Schemas, compiled once per process (a TypeBox schema without its symbols is plain JSON Schema). */
const INPUTS = new Map(TOOLS.map((tool) => [tool.name, fromJsonSchema<Args>(JSON.parse(JSON.stringify(tool.input)))]))

const INSTRUCTIONS =
  'Short links of one account: create, read, change and delete links, tag them, read their statistics and the plan. ' +
  'Each tool is one operation of the REST API (described at /swagger) with the same arguments, rules and error codes. ' +
  "An error result starts with the API's error code and a hint saying what to do. " +
  "Some operations (deleting a link by default) wait for the human's approval: the result is then the approval with the URL to show the human; nothing has happened yet. " +
  'dry_run: true on create_link, update_link and delete_link checks everything and shows the result without writing.'

export function mcpServer(caller: Caller, context: DispatchContext): McpServer {
  const server = new McpServer({ name: 'linkservice', title: 'Link service', version: API_DOCUMENT_VERSION }, { instructions: INSTRUCTIONS })
  for (const tool of TOOLS) {
    server.registerTool(tool.name, { title: tool.title, description: tool.description, inputSchema: INPUTS.get(tool.name)!, annotations: { title: tool.title, ...tool.annotations } }, (args: Args) =>
      callTool(tool, args ?? {}, caller, context),
    )
  }
  return server
}
