/**
 * A real @gradio/client in its own process, so a test can kill it mid-answer (SIGKILL: no
 * goodbye, the socket just dies). Usage:
 *   node --import tsx tests/helpers/chat-submit-process.ts <gatewayBaseUrl> <token> <text> <request_id>
 * Prints one JSON line per ChatMessage received.
 */
import { connectChat } from './chat-client.ts';

const [baseUrl, token, text, requestId] = process.argv.slice(2);
const client = await connectChat(baseUrl, token);
const submission = client.submit('/chat', { message: { text, files: [] }, request_id: requestId });
for await (const event of submission) {
  if (event.type === 'data') process.stdout.write(JSON.stringify((event.data as unknown[])[0]) + '\n');
}
client.close();
