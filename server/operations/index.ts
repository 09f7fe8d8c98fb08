/** The operations catalog: one declaration per tool, read by the api, the agent and the approvals. @module */
export { TOOLS, APPROVAL_TOOLS, approvalPrompt, findToolSpec, toolPath, toolSpec, type ToolName, type ToolSpec } from './catalog.ts';
