/** MCP servers as a tool source for the agent (issue 12). @module */
export { MCP_KIND, McpToolSource, type McpSourceOptions, type McpSourceStatus, type McpServersStatus, type McpServerStatus } from './source.ts';
export type { McpAuditSink } from './audit.ts';
