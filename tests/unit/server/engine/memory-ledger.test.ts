import { MemoryLedger } from '../../../../server/engine/memory-ledger.ts';
import { runLedgerContract } from '../../../helpers/ledger-contract.ts';

runLedgerContract('memory', async () => {
  const ledger = new MemoryLedger();
  return { ledger, close: () => ledger.close() };
});
