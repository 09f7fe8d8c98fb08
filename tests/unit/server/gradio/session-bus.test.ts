import { runBusContract } from '../../../helpers/bus-contract.ts';
import { createMemorySessionBus } from '../../../../server/gradio/session-bus.ts';

runBusContract('memory', async () => {
  const bus = createMemorySessionBus();
  return { here: bus, there: bus, replicas: false, close: () => bus.close() };
});
