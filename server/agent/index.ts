/**
 * The agent area's public API (used by server/chat and server/main only).
 * @module
 */
export { createAgentRuntime, type AgentRuntime, type AgentRuntimeOptions, type RunInput, type ResumeInput, type AttachmentPart } from './runtime.ts';
export type { AgentEvent, ApprovalDecision, EditReview, PendingApproval, ApprovalRequest } from './types.ts';
export { createChatModel, type ModelSettings } from './model.ts';
export { createTitleModel, type TitleModel, type TitlePrompt } from './title-model.ts';
export { SYSTEM_PROMPT } from './graph.ts';
export { createServiceTokenProvider, type ServiceCredentials, type ServiceTokenProvider } from './service-token.ts';
export { getToolsForQuery, type Embedder } from './select-tools.ts';
export { createEmbedder, localEmbedder } from './embedder.ts';
export { ALL_TOOLS, APPROVAL_TOOLS, type GrantUse } from './tools/index.ts';
export { McpToolSource, type McpSourceStatus, type McpServerStatus, type McpAuditSink } from './mcp/index.ts';
export { defaultActions, toolPrefixes, type ToolSource, type ToolSourceStatus, type ToolSourceDescription, type ToolDescription, type ToolUser, type ToolCallContext, type ToolPreview } from './tool-source.ts';
export { builtinToolSource } from './tools/source.ts';
export { offlineModelRoutes, createOfflineModelRoutes, type OfflineModelOptions } from './offline-model/index.ts';
