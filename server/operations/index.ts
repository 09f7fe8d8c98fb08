/** The operations catalog: one declaration per tool, read by the api, the agent and the approvals. @module */
export { TOOLS, APPROVAL_TOOLS, approvalPrompt, findToolSpec, toolPath, toolRoute, toolSpec, type ToolName, type ToolSpec } from './catalog.ts';
export { argumentLabels, humanize, type ArgumentLabels, type EffectPreview } from './preview.ts';
