/** MCP servers as a tool source for the agent (issue 12). @module */
export { McpToolSource, type McpSourceOptions, type McpSourceStatus, type McpServerStatus } from './source.ts';
export type { McpAuditSink } from './audit.ts';
