/** The ToolSource contract for the in-memory source (tests/helpers/memory-tool-source.ts). */
import { createServiceTokenProvider } from '../../../../server/agent/service-token.ts';
import { memoryToolSource, NOTES_WRITE } from '../../../helpers/memory-tool-source.ts';
import { runToolSourceContract } from '../../../helpers/tool-source-contract.ts';

runToolSourceContract('memory', async () => ({
  source: memoryToolSource([NOTES_WRITE]),
  sample: { tool: 'notes_write', args: { text: 'hello' } },
  run: {
    apiUrl: 'http://unused.invalid', userToken: 'unused', user: { id: 'u1', username: 'alice', tenant: 'demo' }, conversationId: 'c1',
    serviceToken: createServiceTokenProvider({ apiUrl: () => 'http://unused.invalid', credentials: { clientId: 'x', clientSecret: 'y' } }), timeoutMs: 1000, fetch,
  },
  close: async () => {},
}));
