/**
 * The gateway's tool sources, in the order the model sees their tools: the built-in operations
 * tools (none when BUILTIN_TOOLS is off), then the MCP servers of TOOLS_FILE. The one place that
 * names the kinds; everything downstream (the runtime, the policy and readiness routes) takes the
 * list. A new kind is one more entry here.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { startMcpTools, type McpStartDeps } from './mcp/start.ts';
import type { ToolSource } from './tool-source.ts';
import { ALL_TOOLS } from './tools/index.ts';
import { builtinToolSource } from './tools/source.ts';

export async function startToolSources(app: FastifyInstance, deps: Omit<McpStartDeps, 'reservedNames'> & { config: Config }): Promise<ToolSource[]> {
  const builtin = builtinToolSource(deps.config.tools.builtin ? ALL_TOOLS : []);
  const mcp = await startMcpTools(app, { ...deps, reservedNames: builtin.describe().tools.map((t) => t.name) });
  return [builtin, mcp];
}
