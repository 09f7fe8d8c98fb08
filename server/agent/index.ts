/**
 * The agent area's public API (used by server/chat and server/main only).
 * @module
 */
export { createAgentRuntime, type AgentRuntime, type AgentRuntimeOptions, type RunInput, type ResumeInput, type AttachmentPart } from './runtime.ts';
export type { AgentEvent, ApprovalDecision, PendingApproval, ApprovalRequest } from './types.ts';
export { createChatModel, type ModelSettings } from './model.ts';
export { SYSTEM_PROMPT } from './graph.ts';
export { createServiceTokenProvider, type ServiceCredentials, type ServiceTokenProvider } from './service-token.ts';
export { getToolsForQuery, type Embedder } from './select-tools.ts';
export { createEmbedder, localEmbedder } from './embedder.ts';
export { ALL_TOOLS, APPROVAL_TOOLS } from './tools/index.ts';
export { McpToolSource, type McpSourceStatus, type McpServerStatus, type McpAuditSink } from './mcp/index.ts';
export { offlineModelRoutes, createOfflineModelRoutes, type OfflineModelOptions } from './offline-model/index.ts';
