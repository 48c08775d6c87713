// The core's memory stores against the same audit contract as PostgreSQL.
import { createMemoryAuditStore, createMemoryKeyStore } from '@keyset/core';
import { describeAuditStoreContract } from './audit-store.contract.ts';

describeAuditStoreContract('memory (core)', async () => {
  const audit = createMemoryAuditStore();
  return { store: createMemoryKeyStore({ audit }), audit };
});
