/**
 * The /chat endpoint's Gradio definition: parameters in the order ARCHITECTURE.md fixes, each
 * with a default so that positional, keyword and the ADR's call shapes all resolve.
 * @module
 */
import type { EndpointDefinition } from '../gradio/index.ts';
import { chatApprovalQuestion } from './chat-mcp.ts';
import type { ChatIdentity } from './identity.ts';

const FILE_DATA = { type: 'object', properties: { path: { type: 'string' }, orig_name: { type: 'string' } } };

export function chatEndpoint(handler: EndpointDefinition<ChatIdentity>['handler']): EndpointDefinition<ChatIdentity> {
  return {
    apiName: 'chat',
    description: 'Chat with the operations assistant. Streams ChatMessages whose metadata.type says what happened.',
    inputs: [
      {
        name: 'message',
        label: 'Message',
        component: 'multimodaltextbox',
        // An object {text, files}, or a plain string (the ADR's confirm sends `message: "confirm"`).
        type: { type: ['object', 'string'], properties: { text: { type: 'string' }, files: { type: 'array', items: FILE_DATA } } },
        pythonType: 'dict(text: str, files: list[filepath]) | str',
        default: null,
        example: { text: 'What is the health of payments-api?', files: [] },
      },
      {
        name: 'conversation_id',
        label: 'Conversation id',
        component: 'textbox',
        description: 'The conversation to continue. Empty: the one this client session used last (a new one at first), as gr.ChatInterface; "new": a new one.',
        default: null,
        example: '',
      },
      { name: 'action', label: 'Action (confirm or deny)', component: 'textbox', default: null, example: '' },
      { name: 'text', label: 'Text', component: 'textbox', default: null, example: '' },
      {
        name: 'files',
        label: 'Files',
        component: 'json',
        type: { type: 'array', items: FILE_DATA },
        pythonType: 'list[filepath]',
        default: null,
        example: [],
      },
      { name: 'request_id', label: 'Request id (idempotent retries)', component: 'textbox', default: null, example: '' },
      { name: 'approval_id', label: 'Approval id (which approval a confirm or deny decides)', component: 'textbox', default: null, example: '' },
      {
        name: 'arguments',
        label: 'Edited arguments (a confirm runs these instead of the proposed ones)',
        component: 'json',
        type: { type: 'object' },
        pythonType: 'dict',
        default: null,
        example: null,
      },
      {
        name: 'grant',
        label: 'Grant (a confirm that also allows matching calls for ttl_s seconds)',
        component: 'json',
        type: { type: 'object', properties: { ttl_s: { type: 'integer' }, match: { type: 'object' }, scope: { type: 'string', enum: ['user', 'tenant'] } } },
        pythonType: 'dict(ttl_s: int, match: dict, scope: str)',
        default: null,
        example: null,
      },
      { name: 'message_id', label: 'Message id (which message a regenerate or edit starts from)', component: 'textbox', default: null, example: '' },
    ],
    outputs: [{ label: 'Response', component: 'json' }],
    // The MCP tool `chat` (Gradio's MCP server): a plain-text message and the approval fields.
    mcp: {
      parameters: {
        message: { type: 'string', description: 'Your message to the operations assistant ("confirm" or "deny" when deciding an approval).' },
        conversation_id: { type: 'string', description: 'The conversation to continue (from an earlier result); omit to start a new one.' },
        action: { type: 'string', enum: ['confirm', 'deny'], description: 'Decide a pending approval: confirm runs the action, deny refuses it.' },
        approval_id: { type: 'string', description: 'Which pending approval the action decides (named in the result that asked for it).' },
      },
      // Clients with elicitation (on the /sse transport) are asked to confirm or deny at once.
      elicit: (outputs) => chatApprovalQuestion(outputs),
    },
    handler,
  };
}
