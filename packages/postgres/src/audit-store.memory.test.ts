// The core's memory store against the same audit contract as PostgreSQL.
import { createMemoryKeyStore } from '@keyset/core';
import { describeAuditStoreContract } from './audit-store.contract.ts';

describeAuditStoreContract('memory (core)', async () => {
  const store = createMemoryKeyStore();
  return { store, audit: store.audit };
});
